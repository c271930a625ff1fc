"""The records the service reasons about (an account, a run, a series, a seat of its roster, a fork, a
turn...): typed and immutable, validated when built, so a value the rules would refuse never reaches the
store and a stored value that breaks them is caught where it is read, not three calls later.

The store's repositories build them from rows; the policies take and return them; the API
derives its response models from them where the shape is the same concept. One module per concept.
"""
from orchestrator.records.base import Count, Ms, Record, Text, Usd

__all__ = ["Count", "Ms", "Record", "Text", "Usd"]
