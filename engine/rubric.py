"""The rubric: the API's results object computed from a match's event log alone.

Every weight, threshold and rule is here and in docs/RUBRIC.md; the version string changes
whenever one of them does.
"""
from __future__ import annotations

from functools import cache

import numpy as np

from engine.kernels import tally as T
from engine.rules import WORLD

RUBRIC_VERSION = "world-rubric-3"

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
    return ranks_within(v, np.array([0, v.size]))


def ranks_within(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """competition_ranks inside each match: 1 + how many in the same match score higher.
    values [A] for all agents of all matches; offsets int64[M + 1] (match m is offsets[m]:offsets[m+1])."""
    sizes = np.diff(offsets)
    match_of = np.repeat(np.arange(sizes.size), sizes)
    slot = np.arange(values.size) - offsets[match_of]
    padded = np.full((sizes.size, int(sizes.max(initial=1))), -np.inf)
    padded[match_of, slot] = values
    above = (padded[match_of] > values[:, None]).sum(axis=1)
    return 1 + above.astype(np.int64)


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@cache
def _crafter_of(mask: int) -> float:
    """The per-match crafter score of one unlock pattern (bit i is ACHIEVEMENTS[i])."""
    return round(crafter_score([100.0 * (mask >> i & 1) for i in range(len(ACHIEVEMENTS))]), 2)


@cache
def _crafter_table() -> np.ndarray:
    return np.array([_crafter_of(k) for k in range(2 ** len(ACHIEVEMENTS))], dtype=np.float64)


def _crafter_scores(masks: np.ndarray) -> np.ndarray:
    """Crafter scores for many agents: a lookup in the table of all 2^12 patterns when there are
    more agents than patterns (a whole archive), else each distinct pattern once (one match)."""
    if masks.size >= 2 ** len(ACHIEVEMENTS):
        return _crafter_table()[masks]
    distinct, where = np.unique(masks, return_inverse=True)
    return np.array([_crafter_of(int(k)) for k in distinct], dtype=np.float64)[where.reshape(-1)]


def scorecards(cnt, worth, header, offsets) -> dict[str, np.ndarray]:
    """The rubric over arrays, for all agents of any number of matches at once (one match: offsets
    [0, N]). cnt int64[A, N_COUNTERS] and worth float64[A] from the tally kernel, header int64[M, 4]
    (side, match ticks, radius, season ticks), offsets int64[M + 1]. Returns one array per field,
    [A] each; bit i of achievement_mask is ACHIEVEMENTS[i]."""
    sizes = np.diff(offsets)
    m = np.repeat(np.arange(sizes.size), sizes)
    side, match_ticks = header[m, 0], header[m, 1]
    n = sizes[m]
    ticks = np.maximum(match_ticks, 1)
    survival = 100 * (0.7 * cnt[:, T.C_TICKS_ALIVE] / ticks + 0.3 * cnt[:, T.C_HEALTH] / WORLD["health_max"])
    top = np.maximum.reduceat(worth, offsets[:-1])[m] if worth.size else worth
    economy = np.divide(100 * worth, top, out=np.zeros(worth.size), where=top > 0)
    honoured_den = cnt[:, T.C_SETTLED] + cnt[:, T.C_VOIDED]
    honour = np.divide(cnt[:, T.C_SETTLED], honoured_den, out=np.zeros(worth.size), where=honoured_den > 0)
    social = (50 * np.minimum(cnt[:, T.C_TRADES], 10) / 10 + 30 * np.minimum(cnt[:, T.C_PARTNERS], 5) / 5
              + 20 * honour)
    worth_rank = ranks_within(worth, offsets)
    standing = np.where(n > 1, (n - worth_rank) / np.maximum(n - 1, 1), 1.0)
    fights = np.minimum(cnt[:, T.C_RAIDS_WON] + cnt[:, T.C_REPELLED], 10) / 10
    competitiveness = 60 * standing + 40 * fights
    seen_share = cnt[:, T.C_SEEN] / (side * side).astype(np.float64)
    exploration = 80 * np.minimum(1.0, seen_share / SEEN_FULL_SHARE) + 20 * np.minimum(cnt[:, T.C_RELICS], 3) / 3
    raw = dict(survival=survival, economy=economy, social=social, competitiveness=competitiveness,
               exploration=exploration)
    dims = {k: np.clip(np.round(v, 2), 0, 100) for k, v in raw.items()}
    fitness = np.round(sum(WEIGHTS[d] * dims[d] for d in DIMENSIONS), 2)

    alive = cnt[:, T.C_ALIVE] != 0
    unlocked = np.stack([
        cnt[:, T.C_G_WOOD] > 0, cnt[:, T.C_G_STONE] > 0, cnt[:, T.C_G_FOOD] > 0, cnt[:, T.C_G_ORE] > 0,
        cnt[:, T.C_RELICS] > 0, cnt[:, T.C_EAT] > 0, cnt[:, T.C_BUILD] > 0, cnt[:, T.C_CRAFT] > 0,
        cnt[:, T.C_TRADES] > 0, cnt[:, T.C_RAIDS_WON] > 0, cnt[:, T.C_REPELLED] > 0,
        # the whole season, not just the ticks a stopped match played
        alive & (cnt[:, T.C_TICKS_ALIVE] >= header[m, 3]),
    ], axis=1) if worth.size else np.zeros((0, len(ACHIEVEMENTS)), bool)
    assert unlocked.shape[1] == len(ACHIEVEMENTS)
    mask = (unlocked.astype(np.int64) << np.arange(unlocked.shape[1])).sum(axis=1)

    # Archetypes, first rule that holds wins; the top dimension is the first maximum.
    trades, won, lost = cnt[:, T.C_TRADES], cnt[:, T.C_RAIDS_WON], cnt[:, T.C_RAIDS_LOST]
    raids = won + lost
    top_dim = np.argmax(np.stack([dims[d] for d in DIMENSIONS], axis=1), axis=1) if worth.size \
        else np.zeros(0, int)
    archetype = np.select(
        [(raids >= 3) & (raids >= trades), trades >= 3,
         (cnt[:, T.C_BUILD] > 0) & (cnt[:, T.C_CRAFT] > 0) & (dims["economy"] >= 50),
         top_dim == DIMENSIONS.index("exploration"), ~alive, top_dim == DIMENSIONS.index("economy")],
        ["Raider", "Trader", "Builder", "Explorer", "Casualty", "Hoarder"], "Survivor")
    return {
        "seat": np.arange(worth.size) - offsets[m], "rank": ranks_within(fitness, offsets),
        "fitness_index": fitness,
        "grade": np.select([fitness >= floor for floor, _ in GRADES], [g for _, g in GRADES], "F"),
        "archetype": archetype, "status": np.where(alive, "alive", "starved"),
        "crafter_score": _crafter_scores(mask), **dims,
        "net_worth": np.round(worth, 2), "ticks_alive": cnt[:, T.C_TICKS_ALIVE], "trades": trades,
        "partners": cnt[:, T.C_PARTNERS], "raids_won": won, "raids_lost": lost,
        "raids_repelled": cnt[:, T.C_REPELLED], "relics": cnt[:, T.C_RELICS], "tiles_seen": cnt[:, T.C_SEEN],
        "refused": cnt[:, T.C_REFUSED], "field_size": n, "match_ticks": match_ticks,
        "achievement_mask": mask,
    }


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


STATS = ("net_worth", "ticks_alive", "trades", "partners", "raids_won", "raids_lost", "raids_repelled",
         "relics", "tiles_seen", "refused")


def score(cols: dict, specs) -> dict:
    """The results object of the API from event columns and the field's agent specs (names, models)."""
    n = len(specs)
    cnt, worth, header = T.tally(n, cols["tick"], cols["agent"], cols["kind"], cols["ok"], cols["a"],
                                 cols["b"], cols["c"], cols["d"], cols["f"], cols["g"], cols["v"])
    match_ticks, season_ticks = int(header[1]), int(header[3])
    cards = scorecards(cnt, worth, header[None, :], np.array([0, n]))
    entries = []
    for i, spec in enumerate(specs):
        rank, mask = int(cards["rank"][i]), int(cards["achievement_mask"][i])
        row = {"status": str(cards["status"][i]), "ticks_alive": int(cards["ticks_alive"][i]),
               "trades": int(cards["trades"][i]), "raids_won": int(cards["raids_won"][i])}
        entries.append({
            "seat": i, "name": spec.name, "model": spec.model, "rank": rank,
            "fitness_index": float(cards["fitness_index"][i]), "grade": str(cards["grade"][i]),
            "archetype": str(cards["archetype"][i]), "status": row["status"],
            "crafter_score": float(cards["crafter_score"][i]),
            "dimensions": {k: float(cards[k][i]) for k in DIMENSIONS},
            "epilogue": epilogue(row, rank, n, match_ticks, season_ticks),
            "achievements": [a for b, a in enumerate(ACHIEVEMENTS) if mask >> b & 1],
            # Python's round on the float, as stored results always had it (np.round can differ in the last digit)
            "stats": {k: round(float(worth[i]), 2) if k == "net_worth" else int(cards[k][i]) for k in STATS},
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
