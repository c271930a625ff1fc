"""What a model seat sees each tick (rendered as text by orchestrator/seats/prompt.py)."""
from __future__ import annotations

from engine import rules
from engine.kernels.codes import RESOURCES, SAY, TERRAINS, WATER
from engine.rules import TERRAIN_RES
from engine.kernels.common import pool_at

# One character per terrain in the view grid; agents are drawn over it.
GLYPHS = {"grass": ".", "forest": "T", "rock": "#", "berries": "*", "ore_vein": "o", "ruins": "R", "water": "~"}


def observation(match, i: int) -> dict:
    w, a, t = match.world, match.agents, match.tick
    r = rules.WORLD["view_radius"]
    x0, y0 = int(a.pos[i, 0]), int(a.pos[i, 1])
    H, W = w.terrain.shape
    grid, tiles = [], []
    for y in range(y0 - r, y0 + r + 1):
        row = []
        for x in range(x0 - r, x0 + r + 1):
            if not (0 <= x < W and 0 <= y < H):
                row.append(" ")
                continue
            terrain = TERRAINS[w.terrain[y, x]]
            row.append(GLYPHS[terrain])
            res = TERRAIN_RES[w.terrain[y, x]]
            if res >= 0 and w.terrain[y, x] != WATER:
                amount = int(pool_at(match.tables.tiles, x, y, t) + 1e-9)
                tiles.append({"x": x, "y": y, "resource": RESOURCES[res], "amount": amount})
        grid.append("".join(row))
    agents = []
    for j in range(match.n):
        if j == i or a.alive[j] == 0:
            continue
        if max(abs(a.pos[j, 0] - x0), abs(a.pos[j, 1] - y0)) <= r:
            agents.append({"id": j, "name": match.specs[j].name, "x": int(a.pos[j, 0]), "y": int(a.pos[j, 1]),
                           "shelter": bool(a.shelter[j]), "tool": bool(a.tool[j])})
    o = match.offers
    to_you, yours = [], []
    for k in range(len(o.oid)):
        if o.oid[k] < 0:
            continue
        item = {"offer_id": int(o.oid[k]), "give": RESOURCES[o.give_r[k]], "give_qty": int(o.give_q[k]),
                "want": RESOURCES[o.want_r[k]], "want_qty": int(o.want_q[k]), "expires_tick": int(o.expires[k])}
        if o.dst[k] == i:
            to_you.append({"from": int(o.src[k]), **item})
        elif o.src[k] == i:
            yours.append({"to": int(o.dst[k]), **item})
    return {
        "tick": t, "season_ticks": match.season_ticks, "actions_per_turn": match.apt,
        "you": {"id": i, "name": match.specs[i].name, "x": x0, "y": y0, "health": int(a.health[i]),
                "satiety": int(a.satiety[i]), "inventory": {RESOURCES[k]: int(a.inv[i, k]) for k in range(len(RESOURCES))},
                "shelter": bool(a.shelter[i]), "tool": bool(a.tool[i])},
        "view": grid, "resources": tiles, "agents": agents, "offers_to_you": to_you, "your_offers": yours,
        "messages": _recent_messages(match, i),
        "last_actions": _last_actions(match, i),
    }


def _recent_messages(match, i: int) -> list[dict]:
    """Messages said during the previous tick that reach agent i."""
    log = match.tables.logi
    out = []
    for row in range(match.rows - 1, -1, -1):
        tick, agent, kind, ok, _, a, b = log[row, :7]
        if tick < match.tick - 1:
            break
        if kind == SAY and ok == 1 and agent != i and a in (-1, i):
            out.append({"from": int(agent), "text": match.messages[int(b)]})
    return out[::-1]


def _last_actions(match, i: int) -> list[dict]:
    """Agent i's own actions of the previous tick with their outcomes, so refusals are visible."""
    from engine.kernels.codes import EVENT_KINDS, N_ACTIONS, REASONS

    log = match.tables.logi
    out = []
    for row in range(match.rows - 1, -1, -1):
        tick, agent, kind, ok, reason = log[row, :5]
        if tick < match.tick - 1:
            break
        if agent == i and kind <= N_ACTIONS:
            out.append({"action": EVENT_KINDS[kind], "ok": bool(ok), "reason": None if ok else REASONS[reason]})
    return out[::-1]
