import pytest

from engine.arena.play import Tools


@pytest.fixture(scope="session")
def tools():
    t = Tools()
    yield t
    t.close()


def seats(*models):
    return [{"name": f"s{i}-{m}", "model": m} for i, m in enumerate(models)]


class Scripted:
    """A seat that answers from a list (a model's replies without a provider), then the first legal move."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.asked = []

    def answer(self, game, feedback=None):
        self.asked.append(feedback)
        return self.answers.pop(0) if self.answers else game.legal()[0]
