"""Decision grading: how well a seat decided, turn by turn (CONTRACT.md section 14, docs/RUBRIC.md)."""
from analytics.grading.scale import GRADER, accuracy, label, summarize
from analytics.grading.world import HORIZON, REFERENCE, ROLLOUTS, decisions_of, grade_match, merge

__all__ = ["GRADER", "HORIZON", "REFERENCE", "ROLLOUTS", "accuracy", "decisions_of", "grade_match", "label",
           "merge", "summarize"]
