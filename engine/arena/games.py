"""The two games' rules as seen by the play loop: whose turn, what a seat is shown, reading an
answer, and how a game ends (CONTRACT.md section 11)."""
from __future__ import annotations

import re

import chess
import chess.pgn

from engine.arena import connect4 as c4

CHESS, CONNECT_FOUR = "arena:chess", "arena:connect-four"
GAMES = (CHESS, CONNECT_FOUR)
CHESS_PLY_CAP = 200


class Chess:
    id = CHESS

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
        """(result from the first mover's side, termination) once the rules end the game."""
        o = self.board.outcome(claim_draw=True)
        if o is not None:
            term = {chess.Termination.CHECKMATE: "checkmate", chess.Termination.STALEMATE: "stalemate",
                    chess.Termination.INSUFFICIENT_MATERIAL: "insufficient_material",
                    chess.Termination.THREEFOLD_REPETITION: "threefold_repetition",
                    chess.Termination.FIVEFOLD_REPETITION: "threefold_repetition",
                    chess.Termination.FIFTY_MOVES: "fifty_moves",
                    chess.Termination.SEVENTYFIVE_MOVES: "fifty_moves"}.get(o.termination, o.termination.name.lower())
            return o.result(), term
        if self.plies >= CHESS_PLY_CAP:
            return "1/2-1/2", "ply_cap"
        return None

    def pgn(self, white: str, black: str, result: str) -> str:
        game = chess.pgn.Game()
        game.headers.update({"Event": "Scenario Studio arena", "White": white, "Black": black, "Result": result})
        node = game
        for m in self.moves:
            node = node.add_variation(m)
        return str(game)


class ConnectFour:
    id = CONNECT_FOUR

    def __init__(self):
        self.columns: list[int] = []  # 0-based
        self.pos = self.mask = 0
        self._won = False

    @property
    def plies(self) -> int:
        return len(self.columns)

    def playable(self) -> list[int]:
        return [c for c in range(c4.WIDTH) if not c4.column_full(self.mask, c)]

    def legal(self) -> list[str]:
        return [str(c + 1) for c in self.playable()]

    def text_grid(self) -> str:
        marks = ".XO"
        rows = [" ".join(marks[v] for v in row) for row in c4.grid(self.columns)]
        return "\n".join(rows + ["1 2 3 4 5 6 7"])

    def prompt(self) -> str:
        me = "X" if self.plies % 2 == 0 else "O"
        return (f"You play {me} in Connect Four (four in a row across, up or diagonally wins; "
                f"X moved first). Grid, top row first:\n{self.text_grid()}\n"
                f"Playable columns: {', '.join(self.legal())}\n"
                "Answer with one column number 1..7, or `resign`.")

    def parse(self, answer: str) -> tuple[int | None, str]:
        text = answer.strip().strip(".").strip()
        if not re.fullmatch(r"[1-7]", text):
            return None, f"'{text[:40]}' is not a column number 1..7"
        c = int(text) - 1
        if c4.column_full(self.mask, c):
            return None, f"column {c + 1} is full"
        return c, ""

    def push(self, c: int) -> dict:
        self.columns.append(c)
        self.pos, self.mask, _ = c4.from_moves(self.columns)
        # pos now holds the next mover's discs: the mover's are the rest of the mask
        self._won = bool(c4.four_in_row(self.pos ^ self.mask))
        return {"column": c + 1}

    def outcome(self) -> tuple[str, str] | None:
        if self._won:
            return ("1-0" if self.plies % 2 == 1 else "0-1"), "four_in_row"
        if self.plies == c4.CELLS:
            return "1/2-1/2", "board_full"
        return None


def new_game(game_id: str):
    return {CHESS: Chess, CONNECT_FOUR: ConnectFour}[game_id]()
