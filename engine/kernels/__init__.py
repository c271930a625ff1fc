"""Compiled kernels. Module-level @njit(cache=True) functions over arrays; no Python objects inside.

Numba's cache is keyed on each kernel's own source file, so structural codes the kernels use
(action, event and reason indices) live in engine/kernels/codes.py beside them: change a code and
the kernels that import it must be touched too (or clear __pycache__).
"""
