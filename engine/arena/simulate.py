"""`studio simulate --scenario arena:...`: one game played and graded in-process, scripted seats only."""
from __future__ import annotations

from engine.arena.games import GAMES
from engine.arena.play import Tools, play
from engine.scenario import draw_seed


class ArenaSimulateError(ValueError):
    pass


def simulate(game_id: str, seats: list[str], seed: int | None = None, first_seat: int = 0) -> dict:
    """{results, moves, effective}: the results object and the graded moves as in the public log."""
    game = GAMES.get(game_id)
    if game is None:
        raise ArenaSimulateError(f"unknown arena game '{game_id}'; arena games: {', '.join(sorted(GAMES))}")
    if len(seats) != 2:
        raise ArenaSimulateError(f"an arena game takes exactly 2 seats, e.g. --seats {game.example}")
    for s in seats:
        why = game.check(s)
        if why:
            raise ArenaSimulateError(why)
    why = game.unavailable()
    if why:
        raise ArenaSimulateError(why)
    seed = draw_seed() if seed is None else seed
    tools = Tools()
    try:
        out = play(game_id, [{"name": s, "model": s} for s in seats], first_seat=first_seat, seed=seed, tools=tools)
    finally:
        tools.close()
    return {"results": out["results"], "moves": out["moves"], "effective": {"seed": seed, "first_seat": first_seat}}


def table(out: dict) -> str:
    r = out["results"]
    g = r["game"]
    lines = [f"{g['id']}  {g['result']}  ({g['termination']}, {g['plies']} plies)  seed {out['effective']['seed']}"]
    for a in r["agents"]:
        dims = ", ".join(f"{k} {v}" for k, v in a["dimensions"].items())
        lines.append(f"  seat {a['seat']} {a['model']:<20} {a['status']:<8} fitness {a['fitness_index']:6.2f}  {dims}")
    return "\n".join(lines)
