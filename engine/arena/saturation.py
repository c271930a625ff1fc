"""Where lichess's win% stops seeing a move: our rule for decided positions (docs/ARENA.md).

lichess's win% caps the evaluation at +-1000 cp and counts a mate as the cap, so once a game is
decided every move of the losing side scores accuracy 100, whatever it gives away. The rule charges
such moves a win% drop of its own; the grade takes the larger of lichess's drop and this one, so
wherever win% does see a move, lichess's grade stands. A winning side may give back material
(converting by simplifying is technique), so it is charged only for a forced mate it lets go; a lost
side still has its opponent's mistakes to hope for, and every pawn it gives away and every move that
brings the mate sooner takes some of them. The cases are in `charge`.
"""
from __future__ import annotations

from chess.engine import Cp, Score

from engine.arena import lichess

MATE_SOONER = lichess.INACCURACY  # win% points per move by which a mate comes sooner
SATURATED_CP = 500  # from here on win%'s slope is under half its slope at 0 cp


def _mate_for(s: Score) -> bool:
    return s.is_mate() and s > Cp(0)


def _mated(s: Score) -> bool:
    return s.is_mate() and s < Cp(0)


def charge(before: Score, after: Score) -> tuple[float, str | None]:
    """(the win% drop the rule charges, why in words) for one move, both scores from the mover's side;
    (0, None) when none of its cases applies.

    - Mate lost: the mover had a forced mate and now has none: lichess's MateLost judgement as a drop
      (score after > 999 cp: 5, an inaccuracy; > 700: 10, a mistake; else 15, a blunder).
    - Mate allowed: the mover was not being mated and now is: 15, a blunder, whatever the score before
      (lichess calls it an inaccuracy below -999 cp and a mistake below -700: the saturation this rule
      is for).
    - Mate sooner: the mover was being mated in N and now is in M < N: 5, an inaccuracy, per move.
    - Material given away where win% has saturated (score before at or below -500 cp, no mate either
      side): the loss in centipawns, uncapped, charged as lichess charges the same loss from a level
      position, 50 - win%(-loss). Beyond 500 cp a centipawn weighs less than half what it weighs at 0,
      and towards the +-1000 cap it weighs nothing; nearer 0, lichess's own drop stands.
    """
    if _mate_for(before) and not _mate_for(after):
        cp = 0 if after.is_mate() else after.score()
        drop = lichess.INACCURACY if cp > 999 else lichess.MISTAKE if cp > 700 else lichess.BLUNDER
        return drop, f"let a forced mate go ({before} to {after})"
    if not before.is_mate() and _mated(after):
        return lichess.BLUNDER, f"walked into a forced mate ({before} to {after})"
    if _mated(before) and _mated(after) and after.mate() > before.mate():
        sooner = after.mate() - before.mate()
        return MATE_SOONER * sooner, f"mate {sooner} move{'s' if sooner > 1 else ''} sooner ({before} to {after})"
    if not before.is_mate() and not after.is_mate() and before.score() <= -SATURATED_CP:
        lost = before.score() - after.score()
        if lost > 0:
            return (lichess.win_percent(0) - lichess.win_percent(-lost),
                    f"gave away {lost} cp in a lost position ({before} to {after})")
    return 0.0, None
