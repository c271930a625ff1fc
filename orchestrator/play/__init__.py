"""The play wing: playing one run's match from a job, wherever it runs (a Ray worker or in-process).

No store, no Ray of its own: `play_job` (pick.py; `play_job_async` on a model worker's loop) picks
the player for the job's kind (world.py, arena.py) and hands back an `Outcome` (job.py) with the
match as Arrow IPC bytes (or, for a scripted worker's chunk, its log as a table: `job.land_chunk`
writes the chunk's matches together); on a worker, `job.for_head` lands a match alone when the worker
reaches the archive and turns the outcome into the run's row for the head. head.py is the one way to the
seats' keys and the recorder of their turns and totals (seats/recording.py).
"""
from orchestrator.play.job import Job, Outcome, unplayed
from orchestrator.play.pick import play_job, play_job_async

__all__ = ["Job", "Outcome", "play_job", "play_job_async", "unplayed"]
