"""Compiled kernels: module-level functions over arrays, no Python objects inside.

Every kernel is built by one of the decorators of jit.py, which also holds the one cache policy.
"""
