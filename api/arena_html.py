"""HTML of arena match pages: the board, the graded move list, the evaluation graph, and stepping
through the game. The game (its entry in GAMES) says which board it draws, its graph and its moves'
words. The chess board is cm-chessboard (MIT), vendored and served by the service itself
(/arena/assets); the graph is inline SVG. Nothing is loaded from elsewhere: the page works offline."""
from __future__ import annotations

import json
from html import escape

from api.console.words import figure, game_end, metric_name
from api.html import bundle_html, match_title, nav
from engine.arena.games import GAMES

_STYLE = ("<style>body{font-family:sans-serif;margin:1.5em;max-width:70em}nav a{margin-right:1rem}"
          "table.board{border-collapse:collapse}table.board td{width:2.2em;height:2.2em;text-align:center;"
          "font-size:1.6em;padding:0}td.l{background:#eed}td.d{background:#8a6}td.c4{background:#36c;border-radius:0}"
          ".disc{display:inline-block;width:1.6em;height:1.6em;border-radius:50%;background:#fff}"
          ".p1{background:#e33}.p2{background:#fd3}#moves{max-height:40em;overflow-y:auto;padding-left:.5em}#moves li{cursor:pointer}#moves li.on{font-weight:bold}"
          ".blunder{color:#c00}.mistake{color:#d60}.inaccuracy{color:#a80}.best,.optimal{color:#070}"
          "</style>")

_JS = r"""
import {Chessboard} from "/arena/assets/cm-chessboard/src/Chessboard.js";
const D = JSON.parse(document.getElementById('data').textContent);
let at = D.frames.length - 1;
let board = null;
if (D.board === 'chess') {
  board = new Chessboard(document.getElementById('board'),
    {position: D.frames[at], assetsUrl: "/arena/assets/cm-chessboard/assets/", style: {pieces: {file: "pieces/standard.svg"}}});
}
function c4Board(g) {
  let h = '<table class="board">';
  for (const row of g) { h += '<tr>' + row.map(v => `<td class="c4"><span class="disc ${v ? 'p' + v : ''}"></span></td>`).join('') + '</tr>'; }
  return h + '</table>';
}
function show(k) {
  at = Math.max(0, Math.min(D.frames.length - 1, k));
  if (board) board.setPosition(D.frames[at], false); else document.getElementById('board').innerHTML = c4Board(D.frames[at]);
  document.getElementById('ply').textContent = `ply ${at} of ${D.frames.length - 1}`;
  document.querySelectorAll('#moves li').forEach((li, i) => li.classList.toggle('on', i + 1 === at));
  const m = document.getElementById('marker'); if (m) m.setAttribute('x1', at * D.dx), m.setAttribute('x2', at * D.dx);
}
document.getElementById('prev').onclick = () => show(at - 1);
document.getElementById('next').onclick = () => show(at + 1);
document.getElementById('start').onclick = () => show(0);
document.getElementById('end').onclick = () => show(D.frames.length - 1);
document.querySelectorAll('#moves li').forEach((li, i) => li.onclick = () => show(i + 1));
document.addEventListener('keydown', e => { if (e.key === 'ArrowLeft') show(at - 1); if (e.key === 'ArrowRight') show(at + 1); });
show(at);
"""


# the dimension a seat's accuracy (its fitness_index) is read from: chess's game accuracy, Connect Four's
# share of optimal moves
_ACCURACY = ("accuracy", "optimal_rate")

_GX, _GY = 56, 8  # px: room left of the plot for the y axis, above it for the top number


def _graph(series: list[float], lo: float, hi: float, caption: str = "", width: int = 600,
           height: int = 160) -> tuple[str, float]:
    """The evaluation line with its axes (ply along x, the game's measure along y, both titled); the plot
    sits in a group shifted by the axes' room, so the page's marker moves in the plot's own units."""
    if len(series) < 2:
        return "", 1.0
    dx = width / (len(series) - 1)
    pts = " ".join(f"{i * dx:.1f},{height - (v - lo) / (hi - lo) * height:.1f}" for i, v in enumerate(series))
    mid = height / 2
    plies = len(series) - 1
    every = next(s for s in (1, 2, 5, 10, 20, 50, 100) if plies / s <= 10)
    marks = "".join(f"<line x1='{p * dx:.1f}' y1='{height}' x2='{p * dx:.1f}' y2='{height + 4}' stroke='#444'/>"
                    f"<text x='{p * dx:.1f}' y='{height + 15}' font-size='10' text-anchor='middle'>{p}</text>"
                    for p in range(0, plies + 1, every))
    ys = "".join(f"<text x='-5' y='{height - (v - lo) / (hi - lo) * height + 3:.1f}' font-size='10' "
                 f"text-anchor='end'>{v:g}</text>" for v in (lo, (lo + hi) / 2, hi))
    ylabel = escape(caption.split(" after ")[0] if " after " in caption else "evaluation")
    cy = _GY + height / 2
    return (f"<svg id='graph' width='{width + _GX + 10}' height='{height + _GY + 34}' role='img' "
            f"aria-label='{escape(caption)}'><g transform='translate({_GX},{_GY})'>"
            f"<rect width='{width}' height='{height}' fill='#f4f4f4'/>"
            f"<line x1='0' y1='{mid}' x2='{width}' y2='{mid}' stroke='#bbb'/>"
            f"<polyline fill='none' stroke='#333' stroke-width='2' points='{pts}'/>"
            f"<line x1='0' y1='{height}' x2='{width}' y2='{height}' stroke='#444'/>"
            f"<line x1='0' y1='0' x2='0' y2='{height}' stroke='#444'/>{marks}{ys}"
            f"<text class='x-label' x='{width / 2}' y='{height + 30}' font-size='11' text-anchor='middle'>ply</text>"
            f"<line id='marker' x1='0' y1='0' x2='0' y2='{height}' stroke='#c00'/></g>"
            f"<text class='y-label' x='12' y='{cy}' font-size='11' text-anchor='middle' "
            f"transform='rotate(-90 12 {cy})'>{ylabel}</text></svg>"), dx


def _move_item(m: dict, game) -> str:
    label = escape(m["label"])
    before, after = game.move_words(m)
    return f"<li>{escape(before)} <span class='{label}'>{label}</span> {escape(after)}</li>"


def arena_page(rep: dict, frames: dict) -> str:
    game = GAMES[rep["scenario_id"]]
    res = rep["results"]
    title = escape(match_title(rep))
    head = (f"<h1>{title}</h1>{nav(rep['match_id'])}<p>Status <b>{escape(rep['status'])}</b>, seed {rep['seed']}</p>"
            f"{bundle_html(rep)}")
    if res:
        head += f"{_result(rep, game)}<ul>"
        for a in res["agents"]:
            # the result first, then the moves' accuracy and what its letter grades (docs/RUBRIC.md); the
            # other figures by their display names, the one the accuracy already is left out
            dims = ", ".join(f"{metric_name(k)} {figure(v, k)}" for k, v in a["dimensions"].items()
                             if k not in _ACCURACY)
            head += (f"<li>seat {a['seat']} · <b>{escape(a['name'])}</b> ({escape(a['model'])}, {escape(a['side'])}): "
                     f"<b>{escape(a['status'])}</b>; accuracy {a['fitness_index']:.1f}%, grade {escape(a['grade'])}; "
                     f"{escape(dims)}<br><small>{escape(a['grade_note'])}</small></li>")
        head += "</ul>"
    if game.notation:
        head += (f"<p><a data-testid='pgn-link' href='/api/matches/{escape(rep['match_id'])}/pgn' download>"
                 f"Download the game as {escape(game.notation)}</a> (evaluations, labels and the oracle's moves)</p>")
    if rep["graph"]:
        series, lo, hi, caption = game.curve(rep["graph"])
        svg, dx = _graph(series, lo, hi, caption)
    else:
        svg, dx, caption = "", 1.0, ""
    data = json.dumps({"game": rep["scenario_id"], "board": game.board, "frames": frames["frames"],
                       "dx": dx}).replace("</", "<\\/")
    moves = "".join(_move_item(m, game) for m in rep["moves"])
    legend = f"<p id='legend' style='max-width:40em'>{escape(game.legend)}</p>" if game.legend else ""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>{_STYLE}"
            f"<link rel='stylesheet' href='/arena/assets/cm-chessboard/assets/chessboard.css'></head><body>{head}"
            f"<div style='display:flex;gap:2em'><div><div id='board' style='width:400px'></div><p><button id='start'>|&lt;</button> "
            f"<button id='prev'>&lt;</button> <span id='ply'></span> <button id='next'>&gt;</button> "
            f"<button id='end'>&gt;|</button></p><p>{caption}</p>{svg}</div>"
            f"<div><ul id='moves' style='list-style:none'>{moves}</ul>{legend}</div></div>"
            f"<script type='application/json' id='data'>{data}</script><script type='module'>{_JS}</script></body></html>")


# The replay: one position at a time, stepped with buttons, the slider, the keys or the move table;
# under the board the move that led to the position, its grade and the game's words for it.
_REPLAY_JS = r"""
import {Chessboard} from "/arena/assets/cm-chessboard/src/Chessboard.js";
const D = JSON.parse(document.getElementById('data').textContent);
const $ = id => document.getElementById(id);
const last = D.frames.length - 1;
let at = 0;
const board = D.board === 'chess' ? new Chessboard($('board'), {position: D.frames[0],
  assetsUrl: "/arena/assets/cm-chessboard/assets/", style: {pieces: {file: "pieces/standard.svg"}}}) : null;
function grid(g) {
  const t = document.createElement('table'); t.className = 'board';
  for (const row of g) { const tr = t.insertRow();
    for (const v of row) { const td = tr.insertCell(), disc = document.createElement('span');
      td.className = 'c4'; disc.className = 'disc' + (v ? ' p' + v : ''); td.append(disc); } }
  return t;
}
function show(k) {
  at = Math.max(0, Math.min(last, k));
  if (board) board.setPosition(D.frames[at], false); else $('board').replaceChildren(grid(D.frames[at]));
  $('slider').value = at;
  $('ply').textContent = `ply ${at} of ${last}`;
  const m = D.moves[at - 1], say = $('move');
  say.replaceChildren();
  if (!m) say.textContent = 'The starting position.';
  else {
    const grade = document.createElement('b'); grade.className = m.label; grade.textContent = m.label;
    say.append(`${m.who} played ${m.move}: `, grade, ` ${m.detail}`);
  }
  document.querySelectorAll('#replay-moves tr[data-ply]').forEach(tr => tr.classList.toggle('on', +tr.dataset.ply === at));
  const mk = $('marker'); if (mk) { mk.setAttribute('x1', at * D.dx); mk.setAttribute('x2', at * D.dx); }
}
$('slider').max = last;
$('slider').oninput = () => show(+$('slider').value);
$('prev').onclick = () => show(at - 1);
$('next').onclick = () => show(at + 1);
$('start').onclick = () => show(0);
$('end').onclick = () => show(last);
document.querySelectorAll('#replay-moves tr[data-ply]').forEach(tr => tr.onclick = () => show(+tr.dataset.ply));
document.addEventListener('keydown', e => { if (e.key === 'ArrowLeft') show(at - 1); if (e.key === 'ArrowRight') show(at + 1); });
show(0);
"""

_TABLE_STYLE = ("<style>table.moves{border-collapse:collapse;margin-top:.5em}table.moves td,table.moves th{padding:.2em .6em;"
                "border-bottom:1px solid #ddd;text-align:left}table.moves th{background:#f4f4f4}"
                "#replay-moves tr[data-ply]{cursor:pointer}#replay-moves tr.on{background:#ffe9a8}</style>")


def _rows(rep: dict, game) -> list[dict]:
    """Each graded move in words: who played it (seat, name, side), the move as the game writes it,
    its grade and the rest of the game's words for it (the figures behind the grade)."""
    names = {s["seat"]: s["name"] for s in rep["roster"]}
    first = rep.get("first_seat", 0)
    out = []
    for m in rep["moves"]:
        move, detail = game.move_words(m)
        side = game.sides[(m["seat"] - first) % 2]
        out.append({"ply": m["ply"], "who": f"seat {m['seat']} · {names.get(m['seat'], '?')} ({side})",
                    "move": move, "label": m["label"], "detail": detail})
    return out


def _moves_table(rows: list[dict], table_id: str) -> str:
    body = "".join(f"<tr data-ply='{r['ply']}'><td>{r['ply']}</td><td>{escape(r['who'])}</td><td>{escape(r['move'])}</td>"
                   f"<td class='{escape(r['label'])}'>{escape(r['label'])}</td><td>{escape(r['detail'])}</td></tr>"
                   for r in rows)
    return (f"<table class='moves' id='{table_id}'><tr><th>Ply</th><th>Played by</th><th>Move</th><th>Grade</th>"
            f"<th>Details</th></tr>{body}</table>")


def _result(rep: dict, game) -> str:
    res = rep["results"]
    if not res:
        return f"<p>Status <b>{escape(rep['status'])}</b>: no graded game yet.</p>"
    g = res["game"]
    return f"<p>Result <b>{escape(g['result'])}</b>, {escape(game_end(res))}, after {g['plies']} plies</p>"


def arena_replay_page(rep: dict, frames: dict) -> str:
    """The game stepped through: a board per ply (cm-chessboard for chess, a grid for Connect Four),
    previous / next / slider / keys, the move that led to the position with its grade, the evaluation
    graph's marker following, and the graded moves as a table that jumps on click."""
    game = GAMES[rep["scenario_id"]]
    title = escape("Replay: " + match_title(rep))
    rows = _rows(rep, game)
    svg, dx, caption = "", 1.0, ""
    if rep["graph"]:
        series, lo, hi, caption = game.curve(rep["graph"])
        svg, dx = _graph(series, lo, hi, caption)
    data = json.dumps({"board": game.board, "frames": frames["frames"], "dx": dx,
                       "moves": rows}).replace("</", "<\\/")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>{_STYLE}{_TABLE_STYLE}"
            f"<link rel='stylesheet' href='/arena/assets/cm-chessboard/assets/chessboard.css'></head><body>"
            f"<h1>{title}</h1>{nav(rep['match_id'])}{_result(rep, game)}"
            f"<div style='display:flex;gap:2em;flex-wrap:wrap'><div><div id='board' style='width:400px'></div>"
            f"<p><button id='start' aria-label='first position'>|&lt;</button> "
            f"<button id='prev' aria-label='previous ply'>&lt;</button> "
            f"<input id='slider' type='range' min='0' value='0' style='width:220px' aria-label='ply'> "
            f"<button id='next' aria-label='next ply'>&gt;</button> "
            f"<button id='end' aria-label='last position'>&gt;|</button> <span id='ply'></span></p>"
            f"<p id='move'></p><p>{escape(caption)}</p>{svg}</div>"
            f"<div>{_moves_table(rows, 'replay-moves')}</div></div>"
            f"<script type='application/json' id='data'>{data}</script>"
            f"<script type='module'>{_REPLAY_JS}</script></body></html>")


def arena_log_page(rep: dict) -> str:
    """The play-by-play of an arena game for a person: the graded moves as a table (the same list is
    JSON with ?format=json)."""
    game = GAMES[rep["scenario_id"]]
    title = escape("Play-by-play: " + match_title(rep))
    rows = _rows(rep, game)
    table = _moves_table(rows, "log-moves") if rows else "<p>No graded moves yet.</p>"
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>{_STYLE}{_TABLE_STYLE}</head>"
            f"<body><h1>{title}</h1>{nav(rep['match_id'])}{_result(rep, game)}{table}"
            f"<p><a href='?format=json'>the same moves as JSON</a></p></body></html>")
