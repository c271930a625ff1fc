"""The rubric: SPEC.md's results object computed from a match's event log alone.

Every weight, threshold and rule is here and in docs/RUBRIC.md; the version string changes
whenever one of them does.
"""
from __future__ import annotations


import numpy as np

from engine.kernels import tally as T

RUBRIC_VERSION = "world-rubric-2"

DIMENSIONS = ("survival", "economy", "social", "competitiveness", "exploration")
WEIGHTS = {"survival": 0.30, "economy": 0.25, "social": 0.15, "competitiveness": 0.15, "exploration": 0.15}
GRADES = ((90, "A+"), (80, "A"), (70, "B"), (60, "C"), (50, "D"), (0, "F"))
ACHIEVEMENTS = ("collect_wood", "collect_stone", "collect_food", "collect_ore", "find_relic", "eat_food",
                "build_shelter", "craft_tool", "close_trade", "win_raid", "repel_raid", "survive_season")
SEEN_FULL_SHARE = 0.5  # seeing half the map earns the whole map-seen part of exploration


def crafter_score(success_rates_percent) -> float:
    """Crafter's score: exp(mean(ln(1 + s_i))) - 1 over achievement success rates s_i in percent."""
    s = np.asarray(success_rates_percent, dtype=np.float64)
    return float(np.exp(np.mean(np.log1p(s))) - 1.0)


def grade(fitness: float) -> str:
    return next(letter for floor, letter in GRADES if fitness >= floor)


def competition_ranks(values: np.ndarray) -> np.ndarray:
    """1 for the highest; equal values share a rank and the next rank skips (1, 2, 2, 4)."""
    v = np.asarray(values)
    return np.array([1 + int(np.sum(v > x)) for x in v], dtype=np.int64)


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def dimensions(cnt: np.ndarray, worth: np.ndarray, header: np.ndarray) -> dict[str, np.ndarray]:
    side, match_ticks = int(header[0]), int(header[1])
    n = cnt.shape[0]
    ticks = max(match_ticks, 1)
    survival = 100 * (0.7 * cnt[:, T.C_TICKS_ALIVE] / ticks + 0.3 * cnt[:, T.C_HEALTH] / 100)
    top = worth.max() if n else 0.0
    economy = 100 * worth / top if top > 0 else np.zeros(n)
    honoured_den = cnt[:, T.C_SETTLED] + cnt[:, T.C_VOIDED]
    honour = np.divide(cnt[:, T.C_SETTLED], honoured_den, out=np.zeros(n), where=honoured_den > 0)
    social = (50 * np.minimum(cnt[:, T.C_TRADES], 10) / 10 + 30 * np.minimum(cnt[:, T.C_PARTNERS], 5) / 5
              + 20 * honour)
    standing = (n - competition_ranks(worth)) / (n - 1) if n > 1 else np.ones(n)
    fights = np.minimum(cnt[:, T.C_RAIDS_WON] + cnt[:, T.C_REPELLED], 10) / 10
    competitiveness = 60 * standing + 40 * fights
    seen_share = cnt[:, T.C_SEEN] / float(side * side)
    exploration = 80 * np.minimum(1.0, seen_share / SEEN_FULL_SHARE) + 20 * np.minimum(cnt[:, T.C_RELICS], 3) / 3
    out = dict(survival=survival, economy=economy, social=social, competitiveness=competitiveness,
               exploration=exploration)
    return {k: np.clip(np.round(v, 2), 0, 100) for k, v in out.items()}


def achievements(cnt: np.ndarray, season_ticks: int) -> np.ndarray:
    """bool[N, len(ACHIEVEMENTS)]: each agent's unlocked achievements in this match."""
    return np.stack([
        cnt[:, T.C_G_WOOD] > 0, cnt[:, T.C_G_STONE] > 0, cnt[:, T.C_G_FOOD] > 0, cnt[:, T.C_G_ORE] > 0,
        cnt[:, T.C_RELICS] > 0, cnt[:, T.C_EAT] > 0, cnt[:, T.C_BUILD] > 0, cnt[:, T.C_CRAFT] > 0,
        cnt[:, T.C_TRADES] > 0, cnt[:, T.C_RAIDS_WON] > 0, cnt[:, T.C_REPELLED] > 0,
        # the whole season, not just the ticks a stopped match played
        (cnt[:, T.C_ALIVE] == 1) & (cnt[:, T.C_TICKS_ALIVE] >= season_ticks),
    ], axis=1)


def archetype(row: dict, dims: dict) -> str:
    raids = row["raids_won"] + row["raids_lost"]
    top = max(DIMENSIONS, key=lambda d: dims[d])
    if raids >= 3 and raids >= row["trades"]:
        return "Raider"
    if row["trades"] >= 3:
        return "Trader"
    if row["shelter"] and row["tool"] and dims["economy"] >= 50:
        return "Builder"
    if top == "exploration":
        return "Explorer"
    if row["status"] == "starved":
        return "Casualty"
    if top == "economy":
        return "Hoarder"
    return "Survivor"


def epilogue(row: dict, rank: int, field_size: int, match_ticks: int, season_ticks: int) -> str:
    if row["status"] == "alive" and match_ticks < season_ticks:
        life = f"Alive when the match stopped at tick {match_ticks} of {season_ticks}"
    elif row["status"] == "alive":
        life = f"Survived all {match_ticks} ticks"
    else:
        life = f"Starved at tick {row['ticks_alive'] - 1}"
    trades = row["trades"]
    deeds = f"closed {trades} trade{'s' if trades != 1 else ''}"
    if row["raids_won"]:
        deeds += f", won {row['raids_won']} raid{'s' if row['raids_won'] != 1 else ''}"
    return f"{life}, {deeds}, finished {ordinal(rank)} of {field_size}."


def score(cols: dict, specs) -> dict:
    """The results object of SPEC.md from event columns and the field's agent specs (names, models)."""
    n = len(specs)
    cnt, worth, header = T.tally(n, cols["tick"], cols["agent"], cols["kind"], cols["ok"], cols["a"],
                                 cols["b"], cols["c"], cols["d"], cols["f"], cols["g"], cols["v"])
    match_ticks, season_ticks = int(header[1]), int(header[3])
    dims = dimensions(cnt, worth, header)
    fitness = np.round(sum(WEIGHTS[d] * dims[d] for d in DIMENSIONS), 2)
    ranks = competition_ranks(fitness)
    unlocked = achievements(cnt, season_ticks)
    entries = []
    for i, spec in enumerate(specs):
        row = {
            "status": "alive" if cnt[i, T.C_ALIVE] else "starved",
            "ticks_alive": int(cnt[i, T.C_TICKS_ALIVE]), "trades": int(cnt[i, T.C_TRADES]),
            "raids_won": int(cnt[i, T.C_RAIDS_WON]), "raids_lost": int(cnt[i, T.C_RAIDS_LOST]),
            "shelter": bool(cnt[i, T.C_BUILD]), "tool": bool(cnt[i, T.C_CRAFT]),
        }
        d = {k: float(dims[k][i]) for k in DIMENSIONS}
        fi = float(fitness[i])
        entries.append({
            "seat": i, "name": spec.name, "model": spec.model, "rank": int(ranks[i]), "fitness_index": fi,
            "grade": grade(fi), "archetype": archetype(row, d), "status": row["status"],
            "crafter_score": round(crafter_score(100.0 * unlocked[i]), 2), "dimensions": d,
            "epilogue": epilogue(row, int(ranks[i]), n, match_ticks, season_ticks),
            "achievements": [a for a, on in zip(ACHIEVEMENTS, unlocked[i]) if on],
            "stats": {"net_worth": round(float(worth[i]), 2), "ticks_alive": row["ticks_alive"],
                      "trades": row["trades"], "partners": int(cnt[i, T.C_PARTNERS]),
                      "raids_won": row["raids_won"], "raids_lost": row["raids_lost"],
                      "raids_repelled": int(cnt[i, T.C_REPELLED]), "relics": int(cnt[i, T.C_RELICS]),
                      "tiles_seen": int(cnt[i, T.C_SEEN]), "refused": int(cnt[i, T.C_REFUSED])},
        })
    seats = [e for e, s in zip(entries, specs) if not s.anchor]
    anchors = [e for e, s in zip(entries, specs) if s.anchor]
    best = min(seats, key=lambda e: (e["rank"], e["seat"])) if seats else None
    return {
        "rubric": RUBRIC_VERSION,
        "agents": seats,
        "anchors": anchors,
        "match_ticks": match_ticks,
        "top_model": {"name": best["name"], "model": best["model"]} if best else None,
        "field_size": n,
    }


