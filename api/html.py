"""HTML for the public match pages: a scorecard with a chart per dimension, and a replay player.

Plain HTML and inline SVG (no build step, no external assets: the pages work offline).
"""
from __future__ import annotations

from html import escape

from engine.rubric import DIMENSIONS

_STYLE = """<style>
body{font-family:system-ui,sans-serif;margin:2rem;color:#222}table{border-collapse:collapse}
td,th{padding:.3rem .6rem;border-bottom:1px solid #ddd;text-align:left}th{background:#f4f4f4}
.charts{display:flex;flex-wrap:wrap;gap:1.5rem;margin-top:1.5rem}.chart h3{margin:.2rem 0;font-size:1rem}
.anchor{color:#777}.seat{white-space:nowrap}nav a{margin-right:1rem}.wrap{display:flex;gap:1.5rem;align-items:flex-start;flex-wrap:wrap}
.legend span{display:inline-block;margin:.1rem .7rem .1rem 0}.dot{display:inline-block;width:.8rem;height:.8rem;
border-radius:50%;margin-right:.3rem;vertical-align:middle}#tip{position:fixed;pointer-events:none;background:#fff;
border:1px solid #999;padding:.3rem .5rem;font-size:.85rem;display:none}#events{font-size:.85rem;max-height:12rem;
overflow:auto}</style>"""


_LABEL_W = 190  # px: room for "greedy-harvester #12 (anchor)" at 11 px


def _nav(match_id: str) -> str:
    base = f"/api/matches/{escape(match_id)}"
    return (f'<nav><a href="{base}/report?format=html">report</a><a href="{base}/replay">replay</a>'
            f'<a href="{base}/log">play-by-play</a></nav>')


def _label(e: dict, anchors: set) -> str:
    return e["name"] + (" (anchor)" if id(e) in anchors else "")


def _bars(entries: list[dict], dim: str, labels: list[str]) -> str:
    h = 18 * len(entries) + 10
    rows = []
    for k, (e, label) in enumerate(zip(entries, labels)):
        v = e["dimensions"][dim]
        y = 5 + 18 * k
        # labels get the room they need (no cut-off names); bars start after the longest
        rows.append(f'<text x="0" y="{y + 12}" font-size="11">{escape(label)}</text>'
                    f'<rect x="{_LABEL_W}" y="{y}" width="{1.6 * v:.1f}" height="14" fill="#4a7fb5"/>'
                    f'<text x="{_LABEL_W + 4 + 1.6 * v:.1f}" y="{y + 12}" font-size="11">{v:.1f}</text>')
    return (f'<div class="chart"><h3>{dim}</h3><svg width="{_LABEL_W + 200}" height="{h}" role="img" '
            f'aria-label="{dim} per agent">{"".join(rows)}</svg></div>')


def report_html(rep: dict) -> str:
    title = escape(f"{rep['name']} - {rep['scenario_id']}")
    res = rep["results"]
    head = (f"<h1>{title}</h1>{_nav(rep['match_id'])}<p>status <b>{escape(rep['status'])}</b>, seed {rep['seed']}, spawn seed "
            f"{rep['spawn_seed']}, config {escape(rep['config_hash'])}</p>")
    if not res:
        return f"<!doctype html><html><head><title>{title}</title>{_STYLE}</head><body>{head}" \
               "<p>No scorecard yet: it appears when the match is archived.</p></body></html>"
    entries = sorted(res["agents"] + res.get("anchors", []), key=lambda e: e["rank"])
    anchors = {id(e) for e in res.get("anchors", [])}
    rows = "".join(
        f'<tr class="{"anchor" if id(e) in anchors else ""}"><td>{e["rank"]}</td><td class="seat">seat {e["seat"]}</td>'
        f'<td>{escape(_label(e, anchors))}</td>'
        f'<td>{escape(e["model"])}</td><td>{e["fitness_index"]:.2f}</td><td>{e["grade"]}</td>'
        f'<td>{escape(e["archetype"])}</td><td>{e["status"]}</td><td>{e["crafter_score"]:.2f}</td>'
        + "".join(f"<td>{e['dimensions'][d]:.1f}</td>" for d in DIMENSIONS)
        + f'<td>{escape(e["epilogue"])}</td></tr>' for e in entries)
    header = "".join(f"<th>{h}</th>" for h in ("rank", "seat", "name", "model", "fitness", "grade", "archetype",
                                                 "status", "crafter") + DIMENSIONS + ("epilogue",))
    labels = [_label(e, anchors) for e in entries]
    charts = "".join(_bars(entries, d, labels) for d in DIMENSIONS)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>{_STYLE}</head><body>{head}"
            f"<p>{res['rubric']}, {res['match_ticks']} ticks played, field of {res['field_size']}</p>"
            f"<table><tr>{header}</tr>{rows}</table><div class='charts'>{charts}</div></body></html>")


_REPLAY_JS = """
const COLORS={'.':'#cfe8b0','T':'#2f7d32','#':'#9e9e9e','*':'#d84372','o':'#6d4c41','R':'#f2c14e','~':'#4f8fd6'};
const MARK={raid:'#d62728',trade:'#2ca02c',starve:'#000'};
const $=id=>document.getElementById(id);
function el(tag,text,style){const e=document.createElement(tag);if(text!=null)e.textContent=text;if(style)e.style.cssText=style;return e;}
function dot(color){const e=el('span');e.className='dot';e.style.background=color;return e;}
const OPEN=['queued','launching','running'];
function follow(d){// live by server-sent events: where the agents stand now; the replay loads once archived
 const es=new EventSource(d.links.replay.replace('/replay','/live'));
 es.addEventListener('progress',ev=>{const p=JSON.parse(ev.data);
  $('status').textContent=p.status=='running'?'Playing now: tick '+p.tick+' of '+p.season_ticks+
   '. The full replay appears when the match is archived.':'The match is '+p.status+'.';
  if(p.frame&&d.terrain.length){window.liveFrame=p.frame;show(Object.assign({},d,{frames:[p.frame],season_ticks:p.season_ticks}),true);}
  else if(p.frame&&!d.asked){d.asked=true;fetch('?format=json').then(r=>r.json()).then(n=>{d=n;});}// it began after the page loaded
  if(!OPEN.includes(p.status)){es.close();setTimeout(load,500);}});
 es.onerror=()=>{es.close();setTimeout(load,3000);};}
function load(){fetch('?format=json').then(r=>r.json()).then(d=>{
 if(!d.frames.length){if(OPEN.includes(d.status))follow(d);
  else $('status').textContent='No events were archived for this match ('+d.status+').';return;}
 $('status').textContent='';show(d);});}
function show(d,live){
 const c=$('map'),x=c.getContext('2d'),n=d.terrain.length,s=Math.max(8,Math.floor(560/Math.max(n,1)));
 c.width=c.height=n*s;window.mapCells=n;const slider=$('t');slider.max=d.frames.length-1;
 const last=d.season_ticks||d.frames[d.frames.length-1].tick||1,legend=$('legend');legend.replaceChildren();
 d.agents.forEach(a=>{const e=el('span');e.append(dot(a.color),el('b',a.label),el('span',' '+a.model,'color:#666'));legend.append(e);});
 const tl=$('timeline'),tx=tl.getContext('2d');tl.width=n*s;tl.height=26;
 let k=0,play=null;
 function frameAt(tick){let i=d.frames.findIndex(f=>f.tick>=tick);return i<0?d.frames.length-1:i;}
 function draw(){for(let y=0;y<n;y++)for(let i=0;i<n;i++){x.fillStyle=COLORS[d.terrain[y][i]]||'#fff';x.fillRect(i*s,y*s,s,s);}
  const f=d.frames[k];$('tick').textContent='tick '+f.tick+' of '+last;
  f.agents.forEach((a,j)=>{x.beginPath();x.arc(a[0]*s+s/2,a[1]*s+s/2,s/2.3,0,7);
   if(a[2]){x.fillStyle=d.agents[j].color;x.fill();x.strokeStyle='#000';x.lineWidth=1;x.stroke();}
   else{x.strokeStyle='#555';x.lineWidth=2;x.stroke();}});
  tx.clearRect(0,0,tl.width,tl.height);tx.fillStyle='#eee';tx.fillRect(0,10,tl.width,6);
  d.events.forEach(e=>{tx.fillStyle=MARK[e.kind]||'#333';tx.fillRect(e.tick/last*(tl.width-3),e.kind=='raid'&&!e.won?16:2,3,8);});
  tx.fillStyle='#000';tx.fillRect(f.tick/last*(tl.width-2),0,2,26);}
 function go(i){k=Math.max(0,Math.min(d.frames.length-1,i));slider.value=k;draw();}
 slider.oninput=()=>go(+slider.value);
 tl.onclick=ev=>go(frameAt(ev.offsetX/tl.width*last));
 $('play').onclick=()=>{if(play){clearInterval(play);play=null;return;}play=setInterval(()=>go((k+1)%d.frames.length),80);};
 c.onmousemove=ev=>{const tip=$('tip'),gx=Math.floor(ev.offsetX/s),gy=Math.floor(ev.offsetY/s);
  const here=d.frames[k].agents.map((a,j)=>[a,j]).filter(([a])=>a[0]==gx&&a[1]==gy);
  if(!here.length){tip.style.display='none';return;}tip.replaceChildren();
  here.forEach(([a,j])=>{const g=d.agents[j],line=el('div');line.append(dot(g.color),el('b',g.label),
   el('div',g.model+(a[2]?'':' (starved)')),el('div','health '+a[3]+', satiety '+a[4]+(a[5]==null?'':', net worth '+a[5])));tip.append(line);});
  tip.style.left=(ev.clientX+12)+'px';tip.style.top=(ev.clientY+12)+'px';tip.style.display='block';};
 c.onmouseleave=()=>{$('tip').style.display='none';};
 const list=$('events');list.replaceChildren();
 d.events.forEach(e=>{const li=el('li');const a=el('a','tick '+e.tick+': '+e.text);a.href='#';
  a.onclick=ev=>{ev.preventDefault();go(frameAt(e.tick));};li.append(dot(d.agents[e.agent].color),a);list.append(li);});
 if(!live)fetch(d.links.report.replace('?format=html','')).then(r=>r.json()).then(rep=>{const res=rep.results;if(!res)return;
  const byName={};d.agents.forEach(a=>{byName[a.name+(a.anchor?'#a':'')]=a;});
  const t=$('score');t.replaceChildren();const h=el('tr');['rank','agent','fitness','status'].forEach(c=>h.append(el('th',c)));t.append(h);
  res.agents.map(e=>[e,false]).concat((res.anchors||[]).map(e=>[e,true])).sort((p,q)=>p[0].rank-q[0].rank).forEach(([e,anc])=>{
   const a=byName[e.name+(anc?'#a':'')],tr=el('tr'),who=el('td');if(a)who.append(dot(a.color));
   who.append(el('span',a?a.label:e.name));tr.append(el('td',e.rank),who,el('td',e.fitness_index.toFixed(1)),el('td',e.status));t.append(tr);});});
 go(0);}
load();
"""


def replay_html(match_id: str) -> str:
    """The map with named, coloured agents (legend; hover for health, satiety and net worth), a timeline
    of raids (red: won above, failed below), trades (green) and starvation (black) that jumps on click,
    the event list, and the scorecard beside it. Everything is inline: no external asset."""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Replay {escape(match_id)}</title>{_STYLE}"
            f"</head><body><h1>Replay</h1>{_nav(match_id)}<p id='status'>loading...</p><div class='legend' "
            f"id='legend'></div><p><button id='play'>play / pause</button> <input id='t' type='range' min='0' "
            f"value='0' style='width:400px' aria-label='tick'> <span id='tick'></span></p><div class='wrap'><div>"
            f"<canvas id='map' aria-label='map'></canvas><br><canvas id='timeline' aria-label='timeline'></canvas>"
            f"<ul id='events'></ul></div><table id='score'></table></div><div id='tip'></div>"
            f"<script>{_REPLAY_JS}</script></body></html>")
