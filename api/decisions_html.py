"""The public report's decisions block: per graded seat its accuracy, labels and a regret-per-tick
graph (inline SVG, no external assets). Numbers only: the report never shows a seat's actions or
replies, which are its owner's (GET /api/v1/runs/:id/decisions)."""
from __future__ import annotations

from html import escape

from analytics.grading.scale import BLUNDER

_W, _H, _GX, _GY = 560, 110, 44, 8  # px: plot size, room left for the y axis and above for its top number


def _graph(seat: dict, ticks: int, top: float, replay: str) -> str:
    """One seat's regret per tick on the block's common scale (`top`), each blunder a dot that opens
    the replay at its tick."""
    points = seat["regret"]
    span = max(1, ticks - 1)
    x = lambda t: t / span * _W  # noqa: E731
    y = lambda r: _H - r / top * _H  # noqa: E731
    line = " ".join(f"{x(t):.1f},{y(r):.1f}" for t, r in points)
    blunders = "".join(f"<a href='{replay}?tick={t}'><circle class='blunder' cx='{x(t):.1f}' cy='{y(r):.1f}' r='4' "
                       f"fill='#c0392b'><title>tick {t}: blunder, regret {r:.2f}</title></circle></a>"
                       for t, r in points if r >= BLUNDER)
    every = next(s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500) if span / s <= 10)
    marks = "".join(f"<line x1='{x(t):.1f}' y1='{_H}' x2='{x(t):.1f}' y2='{_H + 4}' stroke='#444'/>"
                    f"<text x='{x(t):.1f}' y='{_H + 15}' font-size='10' text-anchor='middle'>{t}</text>"
                    for t in range(0, ticks, every))
    ys = "".join(f"<text x='-5' y='{y(v) + 3:.1f}' font-size='10' text-anchor='end'>{v:.2g}</text>"
                 for v in (0, top / 2, top))
    label = f"regret per tick, {seat['name']}"
    cy = _GY + _H / 2
    return (f"<svg class='regret' width='{_W + _GX + 10}' height='{_H + _GY + 34}' role='img' "
            f"aria-label='{escape(label)}'><g transform='translate({_GX},{_GY})'>"
            f"<rect width='{_W}' height='{_H}' fill='#f4f4f4'/>"
            f"<polyline fill='none' stroke='#c0392b' stroke-width='1.5' points='{line}'/>{blunders}"
            f"<line x1='0' y1='{_H}' x2='{_W}' y2='{_H}' stroke='#444'/>"
            f"<line x1='0' y1='0' x2='0' y2='{_H}' stroke='#444'/>{marks}{ys}"
            f"<text class='x-label' x='{_W / 2}' y='{_H + 30}' font-size='11' text-anchor='middle'>tick</text></g>"
            f"<text class='y-label' x='12' y='{cy}' font-size='11' text-anchor='middle' "
            f"transform='rotate(-90 12 {cy})'>regret</text></svg>")


def decisions_block(dec: dict | None, ticks: int, match_id: str) -> str:
    """The block for a report whose grading is done; empty otherwise. Every seat's graph on one scale,
    so that their regrets compare at a glance."""
    if not dec or not dec["seats"]:
        return ""
    head = "".join(f"<th>{h}</th>" for h in ("Seat", "Name", "Decisions graded", "Accuracy (%)",
                                             "Mean regret (points)", "Inaccuracies", "Mistakes", "Blunders"))
    rows = "".join(f"<tr><td class='seat'>seat {s['seat']}</td><td>{escape(s['name'])}</td><td>{s['graded']}</td>"
                   f"<td>{s['accuracy']:.1f}</td><td>{s['mean_regret']:.2f}</td><td>{s['inaccuracies']}</td>"
                   f"<td>{s['mistakes']}</td><td>{s['blunders']}</td></tr>" for s in dec["seats"])
    top = max([1.0, *(r for s in dec["seats"] for _, r in s["regret"])])
    replay = f"/api/matches/{escape(match_id)}/replay"
    graphs = "".join(f"<div class='chart'><h3>seat {s['seat']} · {escape(s['name'])}: regret per tick</h3>"
                     f"{_graph(s, ticks, top, replay)}</div>" for s in dec["seats"])
    return (f"<h2>Decisions</h2><p>Every decision of the graded seats, graded by {escape(dec['grader'])}: "
            f"{dec['rollouts']} rollouts of {dec['horizon_ticks']} ticks per candidate turn; regret is the "
            f"fitness points the turn taken left against the best candidate. The graphs share one scale; "
            f"a dot is a blunder (regret {BLUNDER:g} or more), and opens the replay at its tick.</p>"
            f"<div class='scroll'><table class='decisions' data-testid='decisions'><tr>{head}</tr>{rows}</table></div><div class='charts'>{graphs}</div>")
