"""The results object of an arena game (CONTRACT.md section 11), from the graded move list."""
from __future__ import annotations

from engine.arena import lichess
from engine.arena.games import CHESS
from engine.arena.grading import white_wins
from engine.rubric import grade

RUBRICS = {CHESS: "arena-chess-1", "arena:connect-four": "arena-connect-four-1"}
ENDS = {"checkmate": "by checkmate", "stalemate": "by stalemate", "insufficient_material": "on insufficient material",
        "threefold_repetition": "by threefold repetition", "fifty_moves": "by the 50-move rule",
        "ply_cap": "at the 200-ply cap", "resignation": "by resignation", "forfeit": "by forfeit",
        "four_in_row": "with four in a row", "board_full": "on a full board", "cancelled": "when cancelled"}


def archetype(status: str, fitness: float, blunders: int) -> str:
    if status == "forfeit":
        return "Rule-breaker"
    if fitness >= 90 and blunders == 0:
        return "Precise"
    if fitness >= 75:
        return "Solid"
    if fitness >= 50:
        return "Erratic"
    return "Blunder-prone"


def _status(result: str, first: bool, termination: str, forfeited: bool) -> str:
    if forfeited:
        return "forfeit"
    if result == "1/2-1/2":
        return "drew"
    if result == "*":
        return "unfinished"
    return "won" if (result == "1-0") == first else "lost"


def build(game_id: str, seats: list[dict], first_seat: int, moves: list[dict], result: str, termination: str,
          turns: list[dict], oracle: dict, pgn: str | None = None, forfeit_seat: int | None = None) -> dict:
    """seats: [{name, model}] by seat index; moves: graded log entries with ply and seat;
    turns: per seat {answers, illegal}."""
    chess_game = game_id == CHESS
    accs = lichess.game_accuracy(white_wins(moves)) if chess_game else (None, None)
    agents = []
    for seat, spec in enumerate(seats):
        mine = [m for m in moves if m["seat"] == seat]
        first = seat == first_seat
        t = turns[seat]
        legal_rate = round(100 * (t["answers"] - t["illegal"]) / t["answers"], 2) if t["answers"] else 100.0
        counts = {k: sum(m["label"] == k for m in mine) for k in ("blunder", "mistake", "inaccuracy")}
        if chess_game:
            acc = accs[0 if first else 1]
            fitness = round(acc, 2) if acc is not None else 0.0
            acpl = round(sum(min(1000, max(0, m["eval_before_cp"] - m["eval_after_cp"])) for m in mine)
                         / len(mine), 1) if mine else 0.0
            dims = {"accuracy": fitness, "acpl": acpl, "blunders": counts["blunder"], "mistakes": counts["mistake"],
                    "inaccuracies": counts["inaccuracy"], "legal_rate": legal_rate}
        else:
            optimal = sum(m["label"] == "optimal" for m in mine)
            fitness = round(100 * optimal / len(mine), 2) if mine else 0.0
            dims = {"optimal_rate": fitness, "blunders": counts["blunder"], "inaccuracies": counts["inaccuracy"],
                    "legal_rate": legal_rate}
        status = _status(result, first, termination, forfeit_seat == seat)
        side = ("white" if first else "black") if chess_game else ("first" if first else "second")
        quality = (f"accuracy {fitness:.1f}%" if chess_game else f"{fitness:.0f}% optimal moves")
        verb = {"won": "Won", "lost": "Lost", "drew": "Drew", "forfeit": "Forfeited",
                "unfinished": "Stopped"}[status]
        epilogue = (f"{verb} {ENDS.get(termination, termination)} after {len(moves)} plies playing {side}; "
                    f"{quality}, {counts['blunder']} blunder{'s' if counts['blunder'] != 1 else ''}.")
        agents.append({"seat": seat, "name": spec["name"], "model": spec["model"],
                       "rank": 2 if status in ("lost", "forfeit") else 1, "fitness_index": fitness,
                       "grade": grade(fitness), "archetype": archetype(status, fitness, counts["blunder"]),
                       "status": status, "crafter_score": None, "dimensions": dims, "epilogue": epilogue,
                       "side": side})
    best = min(agents, key=lambda a: (a["rank"], a["seat"]))
    game = {"id": game_id, "result": result, "termination": termination, "plies": len(moves), "oracle": oracle,
            "first_seat": first_seat}
    if chess_game:
        game["pgn"] = pgn
    return {"rubric": RUBRICS[game_id], "agents": agents, "anchors": [], "match_ticks": len(moves),
            "top_model": {"name": best["name"], "model": best["model"]}, "field_size": len(seats), "game": game}
