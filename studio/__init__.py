"""The top of the house: the `studio` console script (studio/cli.py)."""
