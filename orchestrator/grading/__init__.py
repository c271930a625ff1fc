"""Decision grading in the world, as a service (docs/RUBRIC.md): which seats a run grades
(`plan`), the grading's states (`states`), the Ray tasks that grade a match's decisions on the
workers (`work`), the fair queue and settings the head's grading scheduler hands them out by, and the reads of
the grades (`read`). The grader itself, world-rollouts-1, is analytics'; how it scores a decision
is docs/RUBRIC.md's.

Submodules are imported where they are used: the run view reads `plan`, the run's pages
and the series summary call `read`.
"""
