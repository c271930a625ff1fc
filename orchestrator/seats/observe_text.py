"""Match.observe(i) -> the compact text a seat reads each tick (format documented in prompt.py)."""
from __future__ import annotations


def _yn(v) -> str:
    return "yes" if v else "no"


def render_observation(obs: dict) -> str:
    you = obs["you"]
    stock = ", ".join(f"{k} {v}" for k, v in you["inventory"].items())
    lines = [
        f"tick {obs['tick']} of {obs['season_ticks']}; up to {obs['actions_per_turn']} actions this turn",
        f"you: #{you['id']} {you['name']} at ({you['x']},{you['y']}); health {you['health']}, "
        f"satiety {you['satiety']}; {stock}; shelter {_yn(you['shelter'])}, tool {_yn(you['tool'])}",
    ]
    view = obs["view"]
    r = len(view) // 2
    lines.append(f"view x {you['x'] - r}..{you['x'] + r}, y {you['y'] - r}..{you['y'] + r}, "
                 "north at the top, you at the centre:")
    lines.extend(view)
    if obs["resources"]:
        # grouped by goods and amount: a forest of equal pools reads as one entry, not thirty
        groups: dict[tuple, list[str]] = {}
        for t in obs["resources"]:
            groups.setdefault((t["resource"], t["amount"]), []).append(f"({t['x']},{t['y']})")
        lines.append("goods: " + "; ".join(f"{res} {amount} at {' '.join(at)}"
                                           for (res, amount), at in groups.items()))
    if obs["agents"]:
        lines.append("agents: " + "; ".join(
            f"#{a['id']} {a['name']} at ({a['x']},{a['y']}) shelter {_yn(a['shelter'])}, tool {_yn(a['tool'])}"
            for a in obs["agents"]))
    if obs["offers_to_you"]:
        lines.append("offers to you: " + "; ".join(
            f"offer {o['offer_id']} from #{o['from']}: you get {o['give_qty']} {o['give']} for "
            f"{o['want_qty']} {o['want']}, until tick {o['expires_tick']}" for o in obs["offers_to_you"]))
    if obs["your_offers"]:
        lines.append("your offers: " + "; ".join(
            f"offer {o['offer_id']} to #{o['to']}: you give {o['give_qty']} {o['give']} for "
            f"{o['want_qty']} {o['want']}, until tick {o['expires_tick']}" for o in obs["your_offers"]))
    if obs["messages"]:
        lines.append("messages: " + "; ".join(
            f"#{m['from']}: {m['text']}" for m in obs["messages"]))
    if obs["last_actions"]:
        lines.append("last actions: " + "; ".join(
            f"{a['action']} ok" if a["ok"] else f"{a['action']} refused ({a['reason']})" for a in obs["last_actions"]))
    return "\n".join(lines)
