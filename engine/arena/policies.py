"""The scripted seat every arena game has: `local/random`, seeded by the run. A game's own scripted
seats are in its module; each answers exactly as a model would: a string."""
from __future__ import annotations

import numpy as np


class Random:
    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def answer(self, position, feedback=None) -> str:
        legal = position.legal()
        return legal[int(self.rng.integers(len(legal)))]
