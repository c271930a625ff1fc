"""The world replay page: the map with named, coloured agents and a terrain legend, the standings and
what every agent holds as of the shown tick, a timeline and a net-worth graph (both with labelled
axes) that jump on click, the moments of the match with a filter per kind, and the final scorecard.

The page loads its frames as JSON (`?format=json`) and draws them with an inline script: nothing is
loaded from elsewhere, so it works offline and under the service's Content-Security-Policy
(api/headers.py admits inline scripts, nothing from other hosts).
"""
from __future__ import annotations

import json
from html import escape

from api.html import STYLE, nav
from orchestrator.statuses import ACTIVE, RUNNING, SCORED

# each terrain's colour by its map glyph (the engine's GLYPHS), the same on the console's play page
TERRAIN_COLORS = {".": "#cfe8b0", "T": "#2f7d32", "#": "#9e9e9e", "*": "#d84372", "o": "#6d4c41", "R": "#f2c14e",
                  "~": "#4f8fd6"}

_STYLE = """<style>
.terrain span,.filters label{display:inline-block;margin:.1rem .8rem .1rem 0;white-space:nowrap}
.swatch{display:inline-block;width:.9rem;height:.9rem;margin-right:.3rem;vertical-align:middle;border:1px solid #888}
#standings td,#standings th{padding:.15rem .35rem;font-size:.85rem}#standings tr.dead{color:#888}
#events li.hidden{display:none}.wrap>div:first-child{max-width:600px}svg text{font-family:system-ui,sans-serif}.note{color:#666;font-size:.85rem}
h2{font-size:1.05rem;margin:1rem 0 .3rem}.live .archived{display:none}</style>"""

_JS = r"""
const COLORS=__COLORS__;
const MARK={raid:'#d62728',trade:'#2ca02c',offer:'#8fd175',decline:'#ff9896',build:'#8c564b',craft:'#9467bd',
 say:'#17becf',starve:'#000'};
const WORDS={raid:'raids',trade:'trades',offer:'offers',decline:'declined offers',build:'shelters built',
 craft:'tools crafted',say:'messages',starve:'starvation'};
const STOPS={season_end:'the season ran out',spend_cap:'the spend cap was reached',cancelled:'cancelled',
 failed:'failed',drained:'drained'};
const SVG='http://www.w3.org/2000/svg';
const $=id=>document.getElementById(id);
function el(tag,text,style){const e=document.createElement(tag);if(text!=null)e.textContent=text;if(style)e.style.cssText=style;return e;}
function dot(color){const e=el('span');e.className='dot';e.style.background=color;return e;}
function sv(tag,attrs,text){const e=document.createElementNS(SVG,tag);for(const k in attrs)e.setAttribute(k,attrs[k]);
 if(text!=null)e.textContent=text;return e;}
function step(max,n){const raw=Math.max(max,1)/n,p=Math.pow(10,Math.floor(Math.log10(raw)));
 return [1,2,5,10].map(m=>m*p).find(s=>s>=raw);}
// a graph's frame: x and y axes with ticks, numbers and a title each; returns the plot's scales
function axes(svg,o){const W=+svg.getAttribute('width'),H=+svg.getAttribute('height'),L=o.left,B=28,T=6,R=10;
 const px=v=>L+v/Math.max(o.xmax,1)*(W-L-R),py=v=>H-B-(v-o.ymin)/Math.max(o.ymax-o.ymin,1e-9)*(H-B-T);
 const g=sv('g',{class:'axes'});svg.append(g);
 g.append(sv('line',{x1:L,y1:H-B,x2:W-R,y2:H-B,stroke:'#444'}));
 const xs=step(o.xmax,6);for(let v=0;v<=o.xmax;v+=xs){g.append(sv('line',{x1:px(v),y1:H-B,x2:px(v),y2:H-B+4,stroke:'#444'}));
  g.append(sv('text',{x:px(v),y:H-B+14,'font-size':10,'text-anchor':'middle'},String(v)));}
 g.append(sv('text',{class:'x-label',x:(L+W-R)/2,y:H-2,'font-size':11,'text-anchor':'middle'},o.xlabel));
 if(o.ylabel){g.append(sv('line',{x1:L,y1:T,x2:L,y2:H-B,stroke:'#444'}));
  const ys=step(o.ymax-o.ymin,4);for(let v=o.ymin;v<=o.ymax+1e-9;v+=ys){g.append(sv('text',{x:L-4,y:py(v)+3,
   'font-size':10,'text-anchor':'end'},String(Math.round(v*100)/100)));}
  g.append(sv('text',{class:'y-label',x:12,y:(T+H-B)/2,'font-size':11,'text-anchor':'middle',
   transform:`rotate(-90 12 ${(T+H-B)/2})`},o.ylabel));}
 return {px,py,W,H,B,T,L};}
const OPEN=__ACTIVE__;
function follow(d){// live by server-sent events: where the agents stand now; the replay loads once archived
 const es=new EventSource(d.links.replay.replace('/replay','/live'));
 es.addEventListener('progress',ev=>{const p=JSON.parse(ev.data);
  $('status').textContent=p.status==__RUNNING__?'Playing now: tick '+p.tick+' of '+p.season_ticks+
   '. The full replay appears when the match is archived.':'The match is '+p.status+'.';
  if(p.frame&&d.terrain.length){window.liveFrame=p.frame;show(Object.assign({},d,{frames:[p.frame],season_ticks:p.season_ticks}),true);}
  else if(p.frame&&!d.asked){d.asked=true;fetch('?format=json').then(r=>r.json()).then(n=>{d=n;});}// it began after the page loaded
  if(!OPEN.includes(p.status)){es.close();setTimeout(load,500);}});
 es.onerror=()=>{es.close();setTimeout(load,3000);};}
function load(){fetch('?format=json').then(r=>r.json()).then(d=>{
 if(!d.frames.length){if(OPEN.includes(d.status))follow(d);
  else $('status').textContent='No events were archived for this match ('+d.status+').';return;}
 $('status').textContent='';show(d);});}
function terrainLegend(d){const t=$('terrain');t.replaceChildren(el('b','Terrain: '));
 Object.keys(COLORS).filter(g=>d.legend&&d.legend[g]).forEach(g=>{const s=el('span'),sw=el('span');sw.className='swatch';
  sw.style.background=COLORS[g];s.append(sw,el('span',d.legend[g].replace('_',' ')));t.append(s);});}
function show(d,live){
 const c=$('map'),x=c.getContext('2d'),n=d.terrain.length,s=Math.max(8,Math.floor(560/Math.max(n,1)));
 document.body.classList.toggle('live',!!live);// what only an archived match has stays hidden while it plays
 c.width=c.height=n*s;window.mapCells=n;const slider=$('t');slider.max=d.frames.length-1;
 const played=live?d.season_ticks:(d.ticks_played??d.frames[d.frames.length-1].tick),last=Math.max(played,1);
 const legend=$('legend');legend.replaceChildren();
 d.agents.forEach(a=>{const e=el('span');e.append(dot(a.color),el('b',a.label),el('span',a.model,'color:#666;margin-left:.35rem'));legend.append(e);});
 terrainLegend(d);
 $('season').textContent=live?'':played+' of '+d.season_ticks+' ticks played; stopped: '+
  (STOPS[d.stop_reason]||d.stop_reason||'unknown')+'.';
 const died={};(d.events||[]).filter(e=>e.kind=='starve').forEach(e=>{died[e.agent]=e.tick;});
 const shown=new Set(d.moments||[]);let k=0,play=null;
 function frameAt(tick){let i=d.frames.findIndex(f=>f.tick>=tick);return i<0?d.frames.length-1:i;}
 // filters: a checkbox per kind of moment present, with its count; they hide moments in the list and the timeline
 const counts={};d.events.forEach(e=>{counts[e.kind]=(counts[e.kind]||0)+1;});
 const fl=$('filters');fl.replaceChildren();
 (d.moments||[]).filter(m=>counts[m]).forEach(m=>{const lab=el('label'),box=el('input');box.type='checkbox';box.checked=true;
  box.value=m;box.onchange=()=>{box.checked?shown.add(m):shown.delete(m);filter();};
  const sw=el('span');sw.className='swatch';sw.style.background=MARK[m];lab.append(box,sw,el('span',WORDS[m]+' ('+counts[m]+')'));fl.append(lab);});
 const tl=$('timeline'),wg=$('worth');[tl,wg].forEach(g=>g.setAttribute('width',Math.max(n*s,360)));
 function timeline(){tl.replaceChildren();const kinds=(d.moments||[]).filter(m=>counts[m]&&shown.has(m));
  tl.setAttribute('height',34+14*Math.max(kinds.length,1));
  const a=axes(tl,{left:110,xmax:last,xlabel:'tick'});
  kinds.forEach((m,r)=>{const y=a.T+r*14;tl.append(sv('text',{class:'lane',x:a.L-6,y:y+10,'font-size':10,'text-anchor':'end'},WORDS[m]));
   d.events.filter(e=>e.kind==m).forEach(e=>{const mark=sv('rect',{class:'mark',x:a.px(e.tick)-1,y:y+1,width:3,height:11,fill:MARK[m]});
    if(m=='raid'&&!e.won)mark.setAttribute('opacity','.35');tl.append(mark);});});
  if(!kinds.length&&Object.keys(counts).length)tl.append(sv('text',{x:a.L+4,y:a.T+10,'font-size':10,fill:'#888'},'no kind of moment is ticked'));
  tl.append(sv('line',{id:'tl-now',x1:0,y1:0,x2:0,y2:a.H-a.B,stroke:'#000','stroke-width':2}));tl.scale=a;}
 function worth(){wg.replaceChildren();if(live||d.frames[0].agents[0][5]==null)return;
  let top=0;d.frames.forEach(f=>f.agents.forEach(a=>{top=Math.max(top,a[5]);}));
  const a=axes(wg,{left:52,xmax:last,ymin:0,ymax:top||1,xlabel:'tick',ylabel:'net worth'});
  d.agents.forEach((g,j)=>wg.append(sv('polyline',{fill:'none',stroke:g.color,'stroke-width':1.5,
   points:d.frames.map(f=>a.px(f.tick).toFixed(1)+','+a.py(f.agents[j][5]).toFixed(1)).join(' ')})));
  wg.append(sv('line',{id:'wg-now',x1:0,y1:a.T,x2:0,y2:a.H-a.B,stroke:'#000','stroke-width':1}));wg.scale=a;}
 function now(svg,id,tick){const l=svg.querySelector('#'+id);if(l&&svg.scale){const v=svg.scale.px(tick);l.setAttribute('x1',v);l.setAttribute('x2',v);}}
 function filter(){document.querySelectorAll('#events li').forEach(li=>li.classList.toggle('hidden',!shown.has(li.dataset.kind)));
  timeline();now(tl,'tl-now',d.frames[k].tick);}
 function standings(f){const t=$('standings'),hold=d.holdings||[];t.replaceChildren();
  $('standings-title').textContent=(live?'Where the agents stand now':'Standings at tick '+f.tick);
  const h=el('tr');['#','agent','status','health','satiety','net worth'].concat(hold).forEach(c=>h.append(el('th',c)));t.append(h);
  f.agents.map((a,j)=>[a,j]).sort((p,q)=>(q[0][2]-p[0][2])||((q[0][5]??0)-(p[0][5]??0))||((died[q[1]]??0)-(died[p[1]]??0))).forEach(([a,j],r)=>{
   const g=d.agents[j],tr=el('tr'),who=el('td');tr.dataset.agent=j;if(!a[2])tr.className='dead';who.append(dot(g.color),el('span',g.label));
   tr.append(el('td',r+1),who,el('td',a[2]?'alive':'starved'+(died[j]!=null?' at tick '+died[j]:'')),el('td',a[3]),el('td',a[4]),
    el('td',a[5]==null?'-':a[5].toFixed(2)));hold.forEach((_,q)=>tr.append(el('td',a[6+q])));t.append(tr);});}
 function draw(){for(let y=0;y<n;y++)for(let i=0;i<n;i++){x.fillStyle=COLORS[d.terrain[y][i]]||'#fff';x.fillRect(i*s,y*s,s,s);}
  const f=d.frames[k];
  $('tick').textContent=live?'tick '+f.tick+' of a '+d.season_ticks+'-tick season (playing)':
   'tick '+f.tick+' of '+played+' played (season '+d.season_ticks+')';
  f.agents.forEach((a,j)=>{x.beginPath();x.arc(a[0]*s+s/2,a[1]*s+s/2,s/2.3,0,7);
   if(a[2]){x.fillStyle=d.agents[j].color;x.fill();x.strokeStyle='#000';x.lineWidth=1;x.stroke();}
   else{x.strokeStyle='#555';x.lineWidth=2;x.stroke();}});
  now(tl,'tl-now',f.tick);now(wg,'wg-now',f.tick);standings(f);fork(f);}
 function fork(f){const a=$('fork'),t=Math.min(f.tick+1,played-1);a.hidden=live||t<1||!__SCORED__.includes(d.status);
  a.href='/console/matches/'+d.match_id+'/fork?tick='+Math.max(t,1);}
 function go(i){k=Math.max(0,Math.min(d.frames.length-1,i));slider.value=k;draw();}
 function jump(svg,ev){const a=svg.scale,r=svg.getBoundingClientRect();if(!a)return;
  go(frameAt((ev.clientX-r.left-a.L)/(a.W-a.L-10)*last));}
 slider.oninput=()=>go(+slider.value);
 $('prev').onclick=()=>go(k-1);$('next').onclick=()=>go(k+1);
 tl.onclick=ev=>jump(tl,ev);wg.onclick=ev=>jump(wg,ev);
 $('play').onclick=()=>{if(play){clearInterval(play);play=null;return;}play=setInterval(()=>go((k+1)%d.frames.length),80);};
 c.onmousemove=ev=>{const tip=$('tip'),gx=Math.floor(ev.offsetX/s),gy=Math.floor(ev.offsetY/s);
  const here=d.frames[k].agents.map((a,j)=>[a,j]).filter(([a])=>a[0]==gx&&a[1]==gy);
  if(!here.length){tip.style.display='none';return;}tip.replaceChildren();
  here.forEach(([a,j])=>{const g=d.agents[j],line=el('div');line.append(dot(g.color),el('b',g.label),
   el('div',g.model+(a[2]?'':' (starved)')),el('div','health '+a[3]+', satiety '+a[4]+(a[5]==null?'':', net worth '+a[5])));tip.append(line);});
  tip.style.left=(ev.clientX+12)+'px';tip.style.top=(ev.clientY+12)+'px';tip.style.display='block';};
 c.onmouseleave=()=>{$('tip').style.display='none';};
 const list=$('events');list.replaceChildren();
 d.events.forEach(e=>{const li=el('li');li.dataset.kind=e.kind;const a=el('a','tick '+e.tick+': '+e.text);a.href='#';
  a.onclick=ev=>{ev.preventDefault();go(frameAt(e.tick));};li.append(dot(d.agents[e.agent].color),a);list.append(li);});
 timeline();worth();
 if(!live)fetch(d.links.report.replace('?format=html','')).then(r=>r.json()).then(rep=>{const res=rep.results;if(!res)return;
  const byName={};d.agents.forEach(a=>{byName[a.name+(a.anchor?'#a':'')]=a;});
  $('score-title').textContent='Final scorecard (after tick '+played+')';
  const t=$('score');t.replaceChildren();const h=el('tr');['Rank','Agent','Fitness index','Status'].forEach(c=>h.append(el('th',c)));t.append(h);
  res.agents.map(e=>[e,false]).concat((res.anchors||[]).map(e=>[e,true])).sort((p,q)=>p[0].rank-q[0].rank).forEach(([e,anc])=>{
   const a=byName[e.name+(anc?'#a':'')],tr=el('tr'),who=el('td');if(a)who.append(dot(a.color));
   who.append(el('span',a?a.label:e.name));tr.append(el('td',e.rank),who,el('td',e.fitness_index.toFixed(1)),el('td',e.status));t.append(tr);});});
 const asked=new URLSearchParams(location.search).get('tick');// ?tick=N opens at that tick (the console's links)
 go(live?0:(asked!=null?frameAt(+asked):k));}
load();
""".replace("__COLORS__", json.dumps(TERRAIN_COLORS)).replace("__ACTIVE__", json.dumps(ACTIVE)) \
    .replace("__RUNNING__", json.dumps(RUNNING)).replace("__SCORED__", json.dumps(SCORED))


def replay_html(match_id: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Replay {escape(match_id)}</title>{STYLE}{_STYLE}"
            f"</head><body><h1>Replay</h1>{nav(match_id)}<p id='status'>loading...</p><p id='season'></p>"
            f"<div class='legend' id='legend'></div><div class='terrain' id='terrain'></div>"
            f"<p><span class='archived'><button id='play'>play / pause</button> "
            f"<button id='prev' aria-label='previous tick'>&lt;</button> "
            f"<input id='t' type='range' min='0' value='0' style='width:400px' aria-label='tick'> "
            f"<button id='next' aria-label='next tick'>&gt;</button></span> <span id='tick'></span> "
            f"<a id='fork' hidden title='the state shown, played on with other players (your own runs)'>"
            f"Fork from this tick</a></p>"
            f"<div class='wrap'><div><canvas id='map' aria-label='map'></canvas><div class='archived'>"
            f"<h2>Timeline</h2><svg id='timeline' width='600' height='48' role='img' aria-label='timeline'></svg>"
            f"<h2>Net worth</h2><svg id='worth' width='600' height='180' role='img' aria-label='net worth per tick'></svg>"
            f"<h2>Moments</h2><div class='filters' id='filters'></div><ul id='events'></ul></div></div>"
            f"<div><h2 id='standings-title'>Standings</h2><table id='standings'></table>"
            f"<p class='note archived'>Ranked by net worth among the living, then by how long the starved lasted.</p>"
            f"<div class='archived'><h2 id='score-title'>Final scorecard</h2><table id='score'></table></div></div></div>"
            f"<div id='tip'></div><script>{_JS}</script></body></html>")
