"""Decision grading in the world, as a service (CONTRACT.md section 14): which seats a run grades
(`plan`), the grading's states (`states`), the Ray tasks that grade a match's decisions on the
workers (`work`), the head's scheduler that hands them out and records what comes back (`grader`),
and the owner's read of the grades (`read`). The grader itself, world-rollouts-1, is
analytics.grading; how it scores a decision is docs/RUBRIC.md's.

Submodules are imported where they are used: the run view reads `plan`, the dispatcher starts
`grader`, the routes call `read`.
"""
