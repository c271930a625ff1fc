"""HTML for the public match report: a scorecard with a chart per dimension (the replay: api/replay_html.py).

Plain HTML and inline SVG (no build step, no external assets: the pages work offline).
"""
from __future__ import annotations

from html import escape

from api.console.words import figure, metric_head, metric_name
from api.decisions_html import decisions_block
from engine.arena.results import FLOORS
from engine.rubric import DIMENSIONS

STYLE = """<style>
body{font-family:system-ui,sans-serif;margin:2rem;color:#222}table{border-collapse:collapse}
td,th{padding:.3rem .6rem;border-bottom:1px solid #ddd;text-align:left}th{background:#f4f4f4}
.charts{display:flex;flex-wrap:wrap;gap:1.5rem;margin-top:1.5rem}.chart h3{margin:.2rem 0;font-size:1rem}
.anchor{color:#777}.seat{white-space:nowrap}nav a{margin-right:1rem}.wrap{display:flex;gap:1.5rem;align-items:flex-start;flex-wrap:wrap}
.legend span{display:inline-block;margin:.1rem .7rem .1rem 0}.dot{display:inline-block;width:.8rem;height:.8rem;
border-radius:50%;margin-right:.3rem;vertical-align:middle}#tip{position:fixed;pointer-events:none;background:#fff;
border:1px solid #999;padding:.3rem .5rem;font-size:.85rem;display:none}#events{font-size:.85rem;max-height:12rem;
overflow:auto}.scroll{overflow-x:auto;max-width:100%}.scroll td{white-space:nowrap}.scroll td.epilogue{white-space:normal;min-width:18rem}
.note{color:#666;max-width:60rem}
table[data-testid=scorecard]{font-size:.85rem}table[data-testid=scorecard] th,.scroll table[data-testid=scorecard] td{white-space:normal;vertical-align:bottom;padding:.3rem .35rem}
table[data-testid=scorecard] tr.epilogue-row th{background:none;font-weight:normal;color:#666;text-align:right;vertical-align:top}
table[data-testid=scorecard] tr:has(+ tr.epilogue-row) td{border-bottom:0}.scroll table[data-testid=scorecard] td.seat{white-space:nowrap}</style>"""


_LABEL_W = 190  # px: room for "greedy-harvester #12 (anchor)" at 11 px


def match_title(rep: dict) -> str:
    """A match page's title: its run's name and scenario, the scenario once (a generated run name starts
    with the scenario's id)."""
    name, scenario = rep["name"] or "", rep["scenario_id"]
    return name if name.startswith(scenario) else f"{name} - {scenario}"


def nav(match_id: str) -> str:
    base = f"/api/matches/{escape(match_id)}"
    return (f'<nav><a href="{base}/report?format=html">report</a><a href="{base}/replay">replay</a>'
            f'<a href="{base}/log">play-by-play</a></nav>')


def _label(e: dict, anchors: set) -> str:
    return e["name"] + (" (anchor)" if id(e) in anchors else "")


def _bars(entries: list[dict], dim: str, labels: list[str]) -> str:
    top = 5 + 18 * len(entries)
    h = top + 34
    rows = []
    for k, (e, label) in enumerate(zip(entries, labels)):
        v = e["dimensions"][dim]
        y = 5 + 18 * k
        # labels get the room they need (no cut-off names); bars start after the longest
        rows.append(f'<text x="0" y="{y + 12}" font-size="11">{escape(label)}</text>'
                    f'<rect x="{_LABEL_W}" y="{y}" width="{1.6 * v:.1f}" height="14" fill="#4a7fb5"/>'
                    f'<text x="{_LABEL_W + 4 + 1.6 * v:.1f}" y="{y + 12}" font-size="11">{v:.1f}</text>')
    # the x axis: the dimension's 0-100 scale, ticked every 25, and its title; the y axis names the agents
    axis = [f'<line x1="{_LABEL_W}" y1="{top}" x2="{_LABEL_W + 160}" y2="{top}" stroke="#444"/>']
    for v in range(0, 101, 25):
        x = _LABEL_W + 1.6 * v
        axis.append(f'<line x1="{x:.0f}" y1="{top}" x2="{x:.0f}" y2="{top + 4}" stroke="#444"/>'
                    f'<text x="{x:.0f}" y="{top + 14}" font-size="10" text-anchor="middle">{v}</text>')
    axis.append(f'<text class="x-label" x="{_LABEL_W + 80}" y="{top + 28}" font-size="11" text-anchor="middle">'
                f'{dim} score (0-100)</text><text class="y-label" x="0" y="{top + 28}" font-size="11">agent</text>')
    return (f'<div class="chart"><h3>{metric_name(dim)}</h3><svg width="{_LABEL_W + 200}" height="{h}" role="img" '
            f'aria-label="{dim} per agent">{"".join(rows)}{"".join(axis)}</svg></div>')


# the scorecard's columns in order; each header is the metric's display name (api/console/words.py)
_COLUMNS = ("rank", "seat", "name", "model", "fitness_index", "grade", "archetype", "status", "crafter_score",
            *DIMENSIONS, "epilogue")
_EXPLAINED = (f"Fitness index: the rubric's 0 to 100 score of a seat's season, weighing the five dimensions "
              f"(survival, economy, social, competitiveness, exploration, each 0 to 100); grade: its letter, "
              f"{FLOORS}. Crafter score: the Crafter benchmark's achievement score (Hafner, 2021), 0 to 100: "
              f"over the season's 12 achievements (gather each good, eat, build a shelter, craft a tool, close a "
              f"trade, win and repel a raid, survive the season), a geometric mean, so that unlocking one more "
              f"counts for more than repeating one. docs/RUBRIC.md says how each is computed.")


def _cell(e: dict, column: str, anchors: set) -> str:
    if column == "seat":
        return f'<td class="seat">seat {e["seat"]}</td>'
    if column == "name":
        return f"<td>{escape(_label(e, anchors))}</td>"
    if column == "epilogue":
        return f'<td class="epilogue">{escape(e["epilogue"])}</td>'
    value = e["dimensions"][column] if column in DIMENSIONS else e[column]
    return f"<td>{escape(figure(value, column))}</td>"


def bundle_html(rep: dict) -> str:
    """The report's link to its result bundle (served to the run's owner), once the run has ended."""
    if not rep.get("bundle"):
        return ""
    return (f"<p class='bundle'><a href=\"{escape(rep['bundle'])}\" data-testid='bundle-link'>Result bundle</a>: "
            "its inputs and recorded replies, which <code>studio verify</code> plays again offline (its owner's "
            "token)</p>")


def report_html(rep: dict) -> str:
    title = escape(match_title(rep))
    res = rep["results"]
    head = (f"<h1>{title}</h1>{nav(rep['match_id'])}<p>Status <b>{escape(rep['status'])}</b>, seed {rep['seed']}, "
            f"spawn seed {rep['spawn_seed']}, config {escape(rep['config_hash'])}</p>{bundle_html(rep)}")
    if rep.get("fork"):  # a fork names the match it plays on from (docs/FORKS.md)
        f = rep["fork"]
        head += (f"<p class='fork'>A fork: ticks 0 to {f['tick'] - 1} as played in <a href=\"/api/matches/"
                 f"{escape(f['match_id'])}/report?format=html\">the original match</a>, then played on from tick "
                 f"{f['tick']}.</p>")
    if not res:
        return f"<!doctype html><html><head><title>{title}</title>{STYLE}</head><body>{head}" \
               "<p>No scorecard yet: it appears when the match is archived.</p></body></html>"
    entries = sorted(res["agents"] + res.get("anchors", []), key=lambda e: e["rank"])
    anchors = {id(e) for e in res.get("anchors", [])}
    # each seat's epilogue on a line of its own under its figures: as a column it pushed the table past
    # a 1280 px window
    figures = [c for c in _COLUMNS if c != "epilogue"]
    rows = "".join(f'<tr class="{"anchor" if id(e) in anchors else ""}">'
                   + "".join(_cell(e, c, anchors) for c in figures) + "</tr>"
                   + f'<tr class="epilogue-row {"anchor" if id(e) in anchors else ""}"><th colspan="2">'
                   f'{escape(metric_head("epilogue"))}</th>' + _cell(e, "epilogue", anchors).replace(
                       "<td ", f'<td colspan="{len(figures) - 2}" ', 1) + "</tr>" for e in entries)
    header = "".join(f"<th>{escape(metric_head(c))}</th>" for c in figures)
    labels = [_label(e, anchors) for e in entries]
    charts = "".join(_bars(entries, d, labels) for d in DIMENSIONS)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>{STYLE}</head><body>{head}"
            f"<p>{res['rubric']}, {res['match_ticks']} ticks played, field of {res['field_size']}</p>"
            f"<div class='scroll'><table data-testid='scorecard'><tr>{header}</tr>{rows}</table></div>"
            f"<p class='note'>{escape(_EXPLAINED)}</p><div class='charts'>{charts}</div>"
            f"{decisions_block(rep.get('decisions'), res['match_ticks'], rep['match_id'])}</body></html>")
