"""HTML of arena match pages: the board, the graded move list, the evaluation graph, and stepping
through the game. The game (engine.arena.games) says which board it draws, its graph and its moves'
words. The chess board is cm-chessboard (MIT), vendored and served by the service itself
(/arena/assets); the graph is inline SVG. Nothing is loaded from elsewhere: the page works offline."""
from __future__ import annotations

import json
from html import escape

from engine.arena.games import GAMES

_STYLE = ("<style>body{font-family:sans-serif;margin:1.5em;max-width:70em}"
          "table.board{border-collapse:collapse}table.board td{width:2.2em;height:2.2em;text-align:center;"
          "font-size:1.6em;padding:0}td.l{background:#eed}td.d{background:#8a6}td.c4{background:#36c;border-radius:0}"
          ".disc{display:inline-block;width:1.6em;height:1.6em;border-radius:50%;background:#fff}"
          ".p1{background:#e33}.p2{background:#fd3}#moves li{cursor:pointer}#moves li.on{font-weight:bold}"
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


def _graph(series: list[float], lo: float, hi: float, width: int = 600, height: int = 160) -> tuple[str, float]:
    if len(series) < 2:
        return "", 1.0
    dx = width / (len(series) - 1)
    pts = " ".join(f"{i * dx:.1f},{height - (v - lo) / (hi - lo) * height:.1f}" for i, v in enumerate(series))
    mid = height / 2
    return (f"<svg id='graph' width='{width}' height='{height}' style='background:#f4f4f4'>"
            f"<line x1='0' y1='{mid}' x2='{width}' y2='{mid}' stroke='#bbb'/>"
            f"<polyline fill='none' stroke='#333' stroke-width='2' points='{pts}'/>"
            f"<line id='marker' x1='0' y1='0' x2='0' y2='{height}' stroke='#c00'/></svg>"), dx


def _move_item(m: dict, game) -> str:
    label = escape(m["label"])
    before, after = game.move_words(m)
    return f"<li>{escape(before)} <span class='{label}'>{label}</span> {escape(after)}</li>"


def arena_page(rep: dict, frames: dict) -> str:
    game = GAMES[rep["scenario_id"]]
    res = rep["results"]
    title = escape(f"{rep['name']} - {rep['scenario_id']}")
    head = f"<h1>{title}</h1><p>status <b>{escape(rep['status'])}</b>, seed {rep['seed']}</p>"
    if res:
        g = res["game"]
        head += f"<p>result <b>{escape(g['result'])}</b> ({escape(g['termination'])}, {g['plies']} plies)</p><ul>"
        for a in res["agents"]:
            dims = ", ".join(f"{escape(k)} {v}" for k, v in a["dimensions"].items())
            head += (f"<li>seat {a['seat']} · <b>{escape(a['name'])}</b> ({escape(a['model'])}, {escape(a['side'])}): "
                     f"{escape(a['status'])}, fitness {a['fitness_index']} ({escape(a['grade'])}); {dims}</li>")
        head += "</ul>"
    if rep["graph"]:
        series, lo, hi, caption = game.curve(rep["graph"])
        svg, dx = _graph(series, lo, hi)
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
