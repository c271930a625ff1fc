"""Which player plays a job: the one place that tells a job's kinds apart (an arena game, a world
match with model seats, a world match of scripted seats). A new kind of player (a model run resumed
after a fault, a seat played by the account's own program) is one module and one line here."""
from __future__ import annotations

from typing import Callable

from engine.arena.games import GAMES
from orchestrator.play import arena, world
from orchestrator.play.head import Head
from orchestrator.play.job import Job, Outcome


def play_job(job: Job, should_stop: Callable[[], bool] = lambda: False,
             on_tick: Callable[[int], None] = lambda t: None, recorder=None,
             on_frame: Callable[[dict], None] | None = None,
             should_drain: Callable[[], bool] = lambda: False) -> Outcome:
    """Play a job wherever it runs: a Ray worker passes the head's Recorder actor, in-process play
    none (orchestrator.play.head). on_tick gets every tick (an arena game's every ply) reported;
    on_frame, the world's live positions after each."""
    head = Head(job, recorder)
    game = GAMES.get(job.scenario_id)
    if game is not None:
        return arena.play(game, job, head, should_stop, on_tick)
    if all(s["provider"] == "local" for s in job.seats):
        return world.play(job, None, should_stop, on_tick, on_frame)
    return world.play(job, world.model_seats(head), should_stop, on_tick, on_frame, should_drain)
