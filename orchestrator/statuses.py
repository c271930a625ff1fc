"""A run's statuses (the API: the strings on the wire), named once for every level of the
orchestrator: the lifecycle that moves a run between them and the
workers' play code below it, which reports the status a match ended in."""
from __future__ import annotations

QUEUED, LAUNCHING, RUNNING = "queued", "launching", "running"
FINISHED, FAILED, CANCELLED = "finished", "failed", "cancelled"

ACTIVE = (QUEUED, LAUNCHING, RUNNING)
TERMINAL = (FINISHED, FAILED, CANCELLED)
STATUSES = ACTIVE + TERMINAL
IN_WORLD = (LAUNCHING, RUNNING)  # handed to the dispatcher, not yet ended
SCORED = (FINISHED, CANCELLED)  # ended with a match: a cancelled run's played ticks are archived and scored

# Not a run's status: a worker's outcome (its status and stop reason) for a model match stopped at a
# tick boundary because the service shuts down. The dispatcher never stores it; it queues the run
# again, to replay its recorded turns and play on (lifecycle's `resume`).
DRAINED = "drained"
