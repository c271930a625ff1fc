"""Decision grading: how well a seat decided, turn by turn (docs/RUBRIC.md)."""
from analytics.grading.scale import GRADER, accuracy, label, summarize
from analytics.grading.world import (HORIZON, OWN_TURNS, REFERENCE, ROLLOUTS, TURN_FIELDS, decisions_of, grade_match,
                                     merge, published)

__all__ = ["GRADER", "HORIZON", "OWN_TURNS", "REFERENCE", "ROLLOUTS", "TURN_FIELDS", "accuracy", "decisions_of",
           "grade_match", "label", "merge", "published", "summarize"]
