"""Chess (python-chess): the position a seat is shown, the `local/stockfish-N` seats, grading by
Stockfish with lichess's formulas, and the page's board (FENs) and win% graph."""
from __future__ import annotations

import re

import chess
import chess.pgn
from chess.engine import Cp, Mate, Score

from engine.arena import lichess, pgn, policies, saturation
from engine.arena.game import Game
from engine.arena.stockfish import GRADE_NODES, capped

PLY_CAP = 200
DRAWN_BY_RULE = ("stalemate", "insufficient_material", "threefold_repetition", "fifty_moves")
TERMINATIONS = {chess.Termination.CHECKMATE: "checkmate", chess.Termination.STALEMATE: "stalemate",
                chess.Termination.INSUFFICIENT_MATERIAL: "insufficient_material",
                chess.Termination.THREEFOLD_REPETITION: "threefold_repetition",
                chess.Termination.FIVEFOLD_REPETITION: "threefold_repetition",
                chess.Termination.FIFTY_MOVES: "fifty_moves",
                chess.Termination.SEVENTYFIVE_MOVES: "fifty_moves"}


class Position:
    def __init__(self):
        self.board = chess.Board()
        self.moves: list[chess.Move] = []

    @property
    def plies(self) -> int:
        return len(self.moves)

    def legal(self) -> list[str]:
        return sorted(m.uci() for m in self.board.legal_moves)

    def history_san(self) -> str:
        return chess.Board().variation_san(self.moves) if self.moves else "(none)"

    def prompt(self) -> str:
        side = "White" if self.board.turn else "Black"
        sans = sorted(self.board.san(m) for m in self.board.legal_moves)
        return (f"You play {side} in a game of chess. Position (FEN): {self.board.fen()}\n"
                f"Board (White pieces upper case, White at the bottom):\n{self.board}\n"
                f"Moves so far: {self.history_san()}\n"
                f"Legal moves (SAN): {', '.join(sans)}\n"
                "Answer with one move in UCI (e2e4) or SAN (e4), or `resign`.")

    def state(self) -> dict:
        """The facts of prompt() as JSON, for a seat that reads JSON (an agent seat)."""
        return {"you": "white" if self.board.turn else "black", "fen": self.board.fen(), "legal_uci": self.legal(),
                "legal_san": sorted(self.board.san(m) for m in self.board.legal_moves),
                "moves_uci": [m.uci() for m in self.moves]}

    def parse(self, answer: str) -> tuple[chess.Move | None, str]:
        text = answer.strip().strip(".").strip()
        if not text:
            return None, "the answer holds no move"
        try:
            move = chess.Move.from_uci(text.lower()) if re.fullmatch(r"[a-hA-H][1-8][a-hA-H][1-8][qrbnQRBN]?", text) \
                else self.board.parse_san(text)
        except ValueError:
            return None, f"'{text[:40]}' is not a legal move here (UCI like e2e4 or SAN like Nf3)"
        if move not in self.board.legal_moves:
            return None, f"'{text[:40]}' is not a legal move here"
        return move, ""

    def push(self, move: chess.Move) -> dict:
        entry = {"uci": move.uci(), "san": self.board.san(move), "fen_before": self.board.fen()}
        self.board.push(move)
        self.moves.append(move)
        return entry

    def outcome(self) -> tuple[str, str] | None:
        """(result from the first mover's side, termination) once the rules end the game. A draw is
        claimed for the players once a position has occurred three times or fifty moves have passed,
        never because the side to move could reach one with its next move (python-chess's claim_draw
        also counts those, and would end a game the side to move is winning)."""
        o = self.board.outcome(claim_draw=False)
        if o is not None:
            return o.result(), TERMINATIONS.get(o.termination, o.termination.name.lower())
        if self.board.is_repetition(3):
            return "1/2-1/2", "threefold_repetition"
        if self.board.is_fifty_moves():
            return "1/2-1/2", "fifty_moves"
        if self.plies >= PLY_CAP:
            return "1/2-1/2", "ply_cap"
        return None

    def pgn(self, white: str, black: str, result: str) -> str:
        game = chess.pgn.Game()
        game.headers.update({"Event": "Scenario Studio arena", "White": white, "Black": black, "Result": result})
        node = game
        for m in self.moves:
            node = node.add_variation(m)
        return str(game)


class StockfishLevel:
    """Stockfish's own skill-level pick (search.cpp, Skill::pick_best) with the run's RNG instead of
    the clock's: 4 lines searched to depth N+1; each line gets a penalty that grows with weakness,
    plus a random share of the top lines' spread."""

    def __init__(self, level: int, rng, engine):
        self.level, self.rng, self.engine = level, rng, engine

    def answer(self, position: Position, feedback=None) -> str:
        if self.level >= 20:
            return self.engine.candidates(position.board, depth=99, multipv=1)[0][1].uci()
        lines = self.engine.candidates(position.board, depth=self.level + 1, multipv=4)
        top = lines[0][0]
        delta = min(top - lines[-1][0], 100)
        weakness = 120 - 2 * self.level
        best, best_score = lines[0][1], -10 ** 9
        for cp, move in lines:
            push = (weakness * (top - cp) + delta * int(self.rng.integers(weakness))) // 128
            if cp + push >= best_score:
                best_score, best = cp + push, move
        return best.uci()


def _final_score(board: chess.Board, termination: str) -> Score | None:
    """The last position's score from the side to move when the rules decide it, else None."""
    if board.is_checkmate():
        return Mate(-0)
    if termination in DRAWN_BY_RULE:
        return Cp(0)
    return None


def grade(position: Position, termination: str, engine, nodes: int = GRADE_NODES) -> list[dict]:
    """Log entries (without ply/seat) for every move, scores from the mover's side. `engine`: an
    Engine or a Pool (stockfish.py); every position is searched on its own, so the grades are the
    same whichever engine searches which position."""
    boards = []
    board = chess.Board()
    for move in position.moves:
        boards.append(board.copy())
        board.push(move)
    final = _final_score(board, termination)
    searched = engine.scores(boards + ([] if final is not None else [board.copy()]), nodes)
    scores = [s for s, _ in searched] + ([final] if final is not None else [])
    out = []
    for i, (move, b) in enumerate(zip(position.moves, boards)):
        before, best = scores[i], searched[i][1]
        after = -scores[i + 1]
        wb, wa = lichess.win_percent(capped(before)), lichess.win_percent(capped(after))
        charged, note = saturation.charge(before, after)
        drop = max(wb - wa, charged)
        label = lichess.worst(lichess.advice(before, after), lichess.label_of_drop(charged))
        out.append({"uci": move.uci(), "san": b.san(move), "fen_before": b.fen(),
                    "eval_before_cp": capped(before), "eval_after_cp": capped(after),
                    "score_before": str(before), "score_after": str(after),
                    "best_uci": best, "best_san": b.san(chess.Move.from_uci(best)) if best else None,
                    "win_before": round(wb, 2), "win_after": round(wa, 2),
                    "drop": round(max(0.0, drop), 2), "accuracy": round(lichess.accuracy_of_drop(drop), 2),
                    "label": label or ("best" if move.uci() == best else "good"),
                    "note": note if charged > 0 and charged >= wb - wa else None})
    return out


def best_san(entry: dict) -> str | None:
    """The engine's move in SAN; logs graded before `best_san` was written carry UCI and the FEN."""
    if "best_san" in entry or not entry.get("best_uci"):
        return entry.get("best_san")
    board = chess.Board(entry["fen_before"])
    return board.san(chess.Move.from_uci(entry["best_uci"]))


def white_wins(entries: list[dict]) -> list[float]:
    """The win% series from white's side, one per position (for game accuracy and the graph)."""
    if not entries:
        return [lichess.win_percent(0)]
    series = [e["win_before"] if i % 2 == 0 else 100 - e["win_before"] for i, e in enumerate(entries)]
    last = entries[-1]["win_after"]
    series.append(last if len(entries) % 2 == 1 else 100 - last)
    return series


class Chess(Game):
    id = "arena:chess"
    title = "Chess"
    rubric = "arena-chess-2"
    moves_per_seat = PLY_CAP // 2
    scripted_ms = (5_000, 60_000)
    scripted = "local/stockfish-N (N 0..20) and local/random"
    models = ("local/stockfish-1", "local/stockfish-8", "local/stockfish-20", "local/random")
    example = "local/stockfish-3,local/random"
    move_hint = "chess in UCI (e2e4) or SAN (Nf3)"
    sides = ("white", "black")
    board = "chess"
    ends = {"checkmate": "by checkmate", "stalemate": "by stalemate", "insufficient_material": "on insufficient material",
            "threefold_repetition": "by threefold repetition", "fifty_moves": "by the 50-move rule",
            "ply_cap": f"at the {PLY_CAP}-ply cap"}
    fitness = "accuracy"
    notation = "PGN"
    measure = "lichess's game accuracy of its moves, from Stockfish's evaluation of every position"

    def unavailable(self) -> str | None:
        from engine.arena import stockfish

        return None if stockfish.available() else stockfish.unavailable_message()

    def new(self) -> Position:
        return Position()

    def check(self, model: str) -> str | None:
        m = re.fullmatch(r"local/stockfish-(\d{1,2})", model)
        if model == "local/random" or (m and 0 <= int(m.group(1)) <= 20):
            return None
        return f"'{model}' is not a chess seat; scripted chess seats: {self.scripted}"

    def policy(self, model: str, rng, tools):
        if model == "local/random":
            return policies.Random(rng)
        return StockfishLevel(int(model.rsplit("-", 1)[1]), rng, tools.player_engine())

    def grade(self, position: Position, termination: str, tools, nodes: int | None) -> tuple[list[dict], dict]:
        engine = tools.grader()
        nodes = nodes or GRADE_NODES
        graded = grade(position, termination, engine, nodes)
        return graded, {"engine": "stockfish", "version": engine.version, "nodes": nodes}

    def record(self, position: Position, names: list[str], result: str) -> dict:
        return {"pgn": position.pgn(names[0], names[1], result)}

    def annotated_pgn(self, moves: list[dict], tags: dict[str, str]) -> str:
        return pgn.annotated(moves, tags)

    def dimensions(self, moves: list[dict], mine: list[dict], first: bool, counts: dict) -> dict:
        acc = lichess.game_accuracy(white_wins(moves), [m["accuracy"] for m in moves],
                                    [m["drop"] if m["note"] else 0.0 for m in moves])[0 if first else 1]
        accuracy = round(acc, 2) if acc is not None else 0.0
        acpl = round(sum(min(1000, max(0, m["eval_before_cp"] - m["eval_after_cp"])) for m in mine)
                     / len(mine), 1) if mine else 0.0
        return {"accuracy": accuracy, "acpl": acpl, "blunders": counts["blunder"], "mistakes": counts["mistake"],
                "inaccuracies": counts["inaccuracy"]}

    def quality(self, fitness: float) -> str:
        return f"accuracy {fitness:.1f}%"

    def graph(self, moves: list[dict]) -> dict:
        return {"white_win_percent": [round(w, 2) for w in white_wins(moves)]}

    def curve(self, graph: dict) -> tuple[list[float], float, float, str]:
        return graph["white_win_percent"], 0, 100, "White's win% after each ply (lichess's formula)"

    def frames(self, moves: list[dict]) -> list[str]:
        board = chess.Board()
        out = [board.fen()]
        for m in moves:
            board.push_uci(m["uci"])
            out.append(board.fen())
        return out

    def move_words(self, move: dict) -> tuple[str, str]:
        note, best = move.get("note"), best_san(move)
        # the engine's move is named only where it differs: the move's label already says "best"
        other = "" if best == move["san"] else f", best {best or '-'}"
        return (f"{(move['ply'] + 1) // 2}{'.' if move['ply'] % 2 else '...'} {move['san']}",
                f"(accuracy {move['accuracy']:.0f}{other}{'; ' + note if note else ''})")


GAME = Chess()
