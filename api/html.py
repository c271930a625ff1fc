"""HTML for the public match pages: a scorecard with a chart per dimension, and a replay player.

Plain HTML and inline SVG (no build step, no external assets: the pages work offline).
"""
from __future__ import annotations

from html import escape

DIMENSIONS = ("survival", "economy", "social", "competitiveness", "exploration")
_STYLE = """<style>
body{font-family:system-ui,sans-serif;margin:2rem;color:#222}table{border-collapse:collapse}
td,th{padding:.3rem .6rem;border-bottom:1px solid #ddd;text-align:left}th{background:#f4f4f4}
.charts{display:flex;flex-wrap:wrap;gap:1.5rem;margin-top:1.5rem}.chart h3{margin:.2rem 0;font-size:1rem}
.anchor{color:#777}</style>"""


def _bars(entries: list[dict], dim: str) -> str:
    h = 18 * len(entries) + 10
    rows = []
    for k, e in enumerate(entries):
        v = e["dimensions"][dim]
        y = 5 + 18 * k
        rows.append(f'<text x="0" y="{y + 12}" font-size="11">{escape(e["name"][:18])}</text>'
                    f'<rect x="120" y="{y}" width="{1.6 * v:.1f}" height="14" fill="#4a7fb5"/>'
                    f'<text x="{124 + 1.6 * v:.1f}" y="{y + 12}" font-size="11">{v:.1f}</text>')
    return (f'<div class="chart"><h3>{dim}</h3><svg width="320" height="{h}" role="img" '
            f'aria-label="{dim} per agent">{"".join(rows)}</svg></div>')


def report_html(rep: dict) -> str:
    title = escape(f"{rep['name']} - {rep['scenario_id']}")
    res = rep["results"]
    head = (f"<h1>{title}</h1><p>status <b>{escape(rep['status'])}</b>, seed {rep['seed']}, spawn seed "
            f"{rep['spawn_seed']}, config {escape(rep['config_hash'])}</p>")
    if not res:
        return f"<!doctype html><html><head><title>{title}</title>{_STYLE}</head><body>{head}" \
               "<p>No scorecard yet: it appears when the match is archived.</p></body></html>"
    entries = sorted(res["agents"] + res.get("anchors", []), key=lambda e: e["rank"])
    anchors = {id(e) for e in res.get("anchors", [])}
    rows = "".join(
        f'<tr class="{"anchor" if id(e) in anchors else ""}"><td>{e["rank"]}</td><td>{escape(e["name"])}</td>'
        f'<td>{escape(e["model"])}</td><td>{e["fitness_index"]:.2f}</td><td>{e["grade"]}</td>'
        f'<td>{escape(e["archetype"])}</td><td>{e["status"]}</td><td>{e["crafter_score"]:.2f}</td>'
        + "".join(f"<td>{e['dimensions'][d]:.1f}</td>" for d in DIMENSIONS)
        + f'<td>{escape(e["epilogue"])}</td></tr>' for e in entries)
    header = "".join(f"<th>{h}</th>" for h in ("rank", "name", "model", "fitness", "grade", "archetype", "status",
                                                 "crafter") + DIMENSIONS + ("epilogue",))
    charts = "".join(_bars(entries, d) for d in DIMENSIONS)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>{_STYLE}</head><body>{head}"
            f"<p>{res['rubric']}, {res['match_ticks']} ticks played, field of {res['field_size']}</p>"
            f"<table><tr>{header}</tr>{rows}</table><div class='charts'>{charts}</div></body></html>")


_REPLAY_JS = """
const COLORS={'.':'#cfe8b0','T':'#2f7d32','#':'#9e9e9e','*':'#d84372','o':'#6d4c41','R':'#f2c14e','~':'#4f8fd6'};
fetch('?format=json').then(r=>r.json()).then(d=>{
 const c=document.getElementById('map'),x=c.getContext('2d'),n=d.terrain.length,s=Math.max(6,Math.floor(640/Math.max(n,1)));
 c.width=c.height=n*s;const slider=document.getElementById('t');slider.max=Math.max(0,d.frames.length-1);
 function draw(k){for(let y=0;y<n;y++)for(let i=0;i<n;i++){x.fillStyle=COLORS[d.terrain[y][i]]||'#fff';x.fillRect(i*s,y*s,s,s);}
  const f=d.frames[k];if(!f)return;document.getElementById('tick').textContent='tick '+f.tick;
  f.agents.forEach((a,j)=>{x.fillStyle=a[2]?(d.agents[j].anchor?'#333':'#e53935'):'#bbb';
   x.beginPath();x.arc(a[0]*s+s/2,a[1]*s+s/2,s/2.4,0,7);x.fill();});}
 let k=0,play=null;slider.oninput=()=>{k=+slider.value;draw(k)};
 document.getElementById('play').onclick=()=>{if(play){clearInterval(play);play=null;return;}
  play=setInterval(()=>{k=(k+1)%d.frames.length;slider.value=k;draw(k)},60)};
 document.getElementById('names').textContent=d.agents.map(a=>a.name).join(', ');draw(0);});
"""


def replay_html(match_id: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Replay {escape(match_id)}</title>{_STYLE}"
            f"</head><body><h1>Replay</h1><p id='names'></p><button id='play'>play / pause</button> "
            f"<input id='t' type='range' min='0' value='0' style='width:400px'> <span id='tick'></span><br>"
            f"<canvas id='map'></canvas><script>{_REPLAY_JS}</script></body></html>")
