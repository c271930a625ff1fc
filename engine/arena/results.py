"""The results object of an arena game (docs/ARENA.md), from the graded move list."""
from __future__ import annotations

from engine.arena.game import Game
from engine.rubric import GRADES, grade

ENDS = {"resignation": "by resignation", "forfeit": "by forfeit", "cancelled": "when cancelled"}  # any game's


BLUNDER_PRONE = 2  # blunders in one game that make a seat Blunder-prone
MEASURE = "accuracy"  # the name every page shows an arena seat's fitness_index under (as lichess does)
VERBS = {"won": "Won", "lost": "Lost", "drew": "Drew", "forfeit": "Forfeited", "unfinished": "Stopped"}
FLOORS = ", ".join(f"{letter} from {floor}" for floor, letter in GRADES if floor) + ", else F"


def explain(entry: dict, game: Game) -> dict:
    """An arena seat's fitness_index and grade grade its moves, not the game's result (docs/RUBRIC.md,
    Arena seats): `fitness_measure` names the figure, `grade_note` says so beside the result, so a won
    game graded F is never read as a failing one."""
    entry["fitness_measure"] = MEASURE
    entry["grade_note"] = (f"{VERBS.get(entry['status'], entry['status'])}; {entry['grade']} grades the quality of its "
                           f"moves, not the result: accuracy {entry['fitness_index']:.1f}%, {game.measure} "
                           f"({FLOORS}).")
    return entry


def archetype(status: str, fitness: float, blunders: int) -> str:
    """First rule that holds (docs/ARENA.md): the word agrees with the blunder count, so a seat that
    never blundered is never Blunder-prone, however low its fitness."""
    if status == "forfeit":
        return "Rule-breaker"
    if blunders >= BLUNDER_PRONE:
        return "Blunder-prone"
    if fitness >= 90 and blunders == 0:
        return "Precise"
    if fitness >= 75:
        return "Solid"
    return "Erratic"


def _status(result: str, first: bool, termination: str, forfeited: bool) -> str:
    if forfeited:
        return "forfeit"
    if result == "1/2-1/2":
        return "drew"
    if result == "*":
        return "unfinished"
    return "won" if (result == "1-0") == first else "lost"


def build(game: Game, seats: list[dict], first_seat: int, moves: list[dict], result: str, termination: str,
          turns: list[dict], oracle: dict, record: dict | None = None, forfeit_seat: int | None = None) -> dict:
    """seats: [{name, model}] by seat index; moves: graded log entries with ply and seat;
    turns: per seat {answers, illegal}; record: the fields results.game adds for this game."""
    ends = {**game.ends, **ENDS}
    agents = []
    for seat, spec in enumerate(seats):
        mine = [m for m in moves if m["seat"] == seat]
        first = seat == first_seat
        t = turns[seat]
        legal_rate = round(100 * (t["answers"] - t["illegal"]) / t["answers"], 2) if t["answers"] else 100.0
        counts = {k: sum(m["label"] == k for m in mine) for k in ("blunder", "mistake", "inaccuracy")}
        dims = {**game.dimensions(moves, mine, first, counts), "legal_rate": legal_rate}
        fitness = dims[game.fitness]
        status = _status(result, first, termination, forfeit_seat == seat)
        side = game.sides[0 if first else 1]
        verb = VERBS[status]
        epilogue = (f"{verb} {ends.get(termination, termination)} after {len(moves)} plies playing {side}; "
                    f"{game.quality(fitness)}, {counts['blunder']} blunder{'s' if counts['blunder'] != 1 else ''}.")
        agents.append({"seat": seat, "name": spec["name"], "model": spec["model"],
                       "rank": 2 if status in ("lost", "forfeit") else 1, "fitness_index": fitness,
                       "grade": grade(fitness), "archetype": archetype(status, fitness, counts["blunder"]),
                       "status": status, "crafter_score": None, "dimensions": dims, "epilogue": epilogue,
                       "side": side})
        explain(agents[-1], game)
    best = min(agents, key=lambda a: (a["rank"], a["seat"]))
    summary = {"id": game.id, "result": result, "termination": termination, "plies": len(moves), "oracle": oracle,
               "first_seat": first_seat, **(record or {})}
    return {"rubric": game.rubric, "agents": agents, "anchors": [], "match_ticks": len(moves),
            "top_model": {"name": best["name"], "model": best["model"]}, "field_size": len(seats), "game": summary}
