"""What seats cost: the price table (dated `as_of`), metering and the estimate.

The table ships as prices.json; `studio prices update` writes a router's own current list to
`<data dir>/prices.json`, read over the shipped one, and an estimate names its table's date and warns
when it is older than STALE_DAYS. Rows hold USD per million tokens [input, output, cached input,
cache write]; unstated cache prices default to the input price, and a model the table does not know
is priced at a high `fallback`, both erring high so a balance check still bites. A router that states
a call's own cost is taken at its word. The estimate assumes tokens per turn rather than measuring
them: the assumptions follow.
"""
# Native ids (anthropic "claude-sonnet-4-5-20250929", openai "gpt-4o-2024-08-06") are looked up as
# <vendor>/<id> (the provider's registry row names its vendor) with the date dropped and version dashes
# read as dots ("claude-sonnet-4.5"). Providers whose registry row prices them free (local seats, agents,
# the self-hosted servers) cost nothing unless the key carries its own price (`studio key set ...
# --usd-per-mtok-in X --usd-per-mtok-out Y`).
#
# The estimate, at about 4 characters per token:
# - input low: the system prompt (rules, turn section, the seat's directions), the tool schemas for
#   format tools, and one observation (OBS_CHARS); input high: the same plus MEMORY_TURNS earlier
#   observations and replies (MEMORY_TURN_CHARS each), times HIGH_MARGIN for busy views and tokenizers;
# - output per turn by reasoning effort: OUTPUT_TOKENS (low, high), the high end capped by max_tokens.
# USD = turns x (input x input price + output x output price) / 1e6, per seat, summed over model
# seats x season ticks x trials; anchors and local seats are free.
from __future__ import annotations

import datetime as dt
import copy
import json
import os
import re
from functools import lru_cache
from importlib import resources as _res
from pathlib import Path

from orchestrator.finite import finite
from orchestrator.seats.actions import tool_specs
from orchestrator.seats.families import reasoning_on
from orchestrator.seats.prompt import MEMORY_TURNS, compose_directions, system_prompt
from orchestrator.seats.chat import DEFAULT_MAX_TOKENS
from orchestrator.provider_kinds import LOCAL, SPECS

CHARS_PER_TOKEN = 4
OBS_CHARS = 900            # a rendered observation with a few goods, agents and offers in view
MEMORY_TURN_CHARS = 1200   # an earlier observation plus the seat's reply and the call results
HIGH_MARGIN = 1.3
OUTPUT_TOKENS = {"off": (40, 300), "low": (300, 1500), "medium": (800, 3000), "high": (1500, 6000)}
VENDOR = {n: s.vendor for n, s in SPECS.items() if s.vendor}  # the registry's, for the console's model list
_DATE = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")
_VERSION = re.compile(r"(?<=\d)-(?=\d(?:$|-))")
OVERRIDE = "prices.json"  # in the data dir: a router's own list (`studio prices update`)
STALE_DAYS = 90


class PriceTable:
    def __init__(self, models: dict[str, tuple[float, ...]], fallback: tuple[float, float],
                 as_of: str | None = None):
        self.as_of = as_of  # the date (YYYY-MM-DD) the prices were read
        self.models = {k: (float(v[0]), float(v[1])) for k, v in models.items()}
        # [cached input, cache write] where the table states them; the input price otherwise
        self.cache = {k: tuple(float(x) for x in (list(v[2:4]) + [v[0]] * (4 - len(v)))[:2])
                      for k, v in models.items()}
        self.fallback = (float(fallback[0]), float(fallback[1]))

    @classmethod
    def shipped(cls) -> "PriceTable":
        data = _shipped()
        return cls(data["models"], data["fallback"], data["as_of"])

    @classmethod
    def for_data_dir(cls, data_dir: str | Path) -> "PriceTable":
        """The service's table: the override in the data dir, when there is one, over the shipped table
        (its rows replace the shipped rows of the same model; its date is the table's)."""
        path = Path(data_dir) / OVERRIDE
        try:
            st = path.stat()
        except FileNotFoundError:
            return cls.shipped()
        return _with_override(str(path), st.st_mtime_ns, st.st_size)

    def lookup(self, provider: str | None, model: str) -> tuple[float, float, str]:
        """(USD per M input, USD per M output, source: table, fallback or free)."""
        provider = provider or "router"
        row = SPECS.get(provider)
        if row is not None and row.pricing == "free":  # an agent pays its own inference, local seats cost nothing
            return 0.0, 0.0, "free"
        name = self._match(provider, model)
        return (*self.models[name], "table") if name else (*self.fallback, "fallback")

    def _match(self, provider: str, model: str) -> str | None:
        names = [model]
        vendor = SPECS[provider].vendor if provider in SPECS else None
        if vendor and "/" not in model:
            bare = _VERSION.sub(".", _DATE.sub("", model))
            names += [f"{vendor}/{model}", f"{vendor}/{_DATE.sub('', model)}", f"{vendor}/{bare}"]
        return next((n for n in names if n in self.models), None)

    def row(self, provider: str | None, model: str) -> list[float] | None:
        """[USD per M input, output, cached input read, cache write] of the model's own row; None where
        the model is priced at the fallback or free."""
        pin, pout, source = self.lookup(provider, model)
        return [pin, pout, *self.cache_prices(provider, model)] if source == "table" else None

    def with_row(self, model: str, row: list[float]) -> "PriceTable":
        """This table with the model's row replaced (a seat metered at the service's price)."""
        out = copy.copy(self)
        out.models = {**self.models, model: (float(row[0]), float(row[1]))}
        out.cache = {**self.cache, model: (float(row[2]), float(row[3]))}
        return out

    def cache_prices(self, provider: str | None, model: str) -> tuple[float, float]:
        """(USD per M cached input tokens read, per M written to the cache); the input price where the
        table states none."""
        pin, _, source = self.lookup(provider, model)
        return self.cache[self._match(provider or "router", model)] if source == "table" else (pin, pin)

    def cost(self, provider: str | None, model: str, input_tokens: int, output_tokens: int,
             cached_tokens: int = 0, cache_write_tokens: int = 0) -> float:
        """input_tokens counts every input token, cached reads and cache writes included."""
        pin, pout, _ = self.lookup(provider, model)
        if not cached_tokens and not cache_write_tokens:
            return (input_tokens * pin + output_tokens * pout) / 1e6
        pread, pwrite = self.cache_prices(provider, model)
        plain = max(0, input_tokens - cached_tokens - cache_write_tokens)
        return (plain * pin + cached_tokens * pread + cache_write_tokens * pwrite + output_tokens * pout) / 1e6


def reply_cost(prices: PriceTable, provider: str | None, model: str, reply,
               usd_per_mtok: list[float] | None = None) -> float:
    """USD of one answered call (a `Reply`): the key's own price when it carries one, else the
    router's own stated cost, else the table with cache reads and writes at their prices. One rule
    for every seat that calls a provider."""
    if usd_per_mtok is not None:  # a self-hosted server that charges: its price, cached or not
        return (reply.input_tokens * usd_per_mtok[0] + reply.output_tokens * usd_per_mtok[1]) / 1e6
    if reply.cost_usd is not None:
        return reply.cost_usd
    return prices.cost(provider, model, reply.input_tokens, reply.output_tokens, reply.cached_tokens,
                       reply.cache_write_tokens)


@lru_cache(maxsize=1)
def _shipped() -> dict:
    return json.loads(_res.files("orchestrator.seats").joinpath("prices.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=4)
def _with_override(path: str, mtime_ns: int, size: int) -> PriceTable:
    # keyed on the file's mtime and size: a table `studio prices update` rewrites is read again
    data, over = _shipped(), json.loads(Path(path).read_text(encoding="utf-8"))
    # a row an earlier version wrote with Infinity or NaN is passed over (the shipped row, else the
    # fallback, prices that model) until `studio doctor --repair` drops it
    kept = {k: v for k, v in over["models"].items() if all(finite(x) and x >= 0 for x in v)}
    return PriceTable({**data["models"], **kept}, data["fallback"], over["as_of"])


def write_override(data_dir: str | Path, models: dict[str, list[float]], as_of: str, source: str) -> Path:
    """Write the override table (replacing any), whole or not at all."""
    path = Path(data_dir) / OVERRIDE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"as_of": as_of, "source": source, "models": models}, indent=1, sort_keys=True),
                   encoding="utf-8")
    os.replace(tmp, path)
    return path


def stale_warning(as_of: str | None, today: dt.date) -> str | None:
    """The estimate's warning when the table's prices were read more than STALE_DAYS before today."""
    if not as_of:
        return None
    days = (today - dt.date.fromisoformat(as_of)).days
    if days <= STALE_DAYS:
        return None
    return (f"the price table is dated {as_of}, {days} days ago (over {STALE_DAYS}): USD figures may be off; "
            "run `studio prices update` to read a router's current prices")


def turn_tokens(seat: dict) -> dict:
    """Assumed tokens of one agent turn of a model seat: {"input": (low, high), "output": (low, high)}."""
    fmt = seat.get("format") or "tools"
    skills = [s if isinstance(s, dict) else {"text": "x" * 2000} for s in seat.get("skills") or []]
    directions = compose_directions(skills, seat.get("instructions"))
    fixed = len(system_prompt(fmt, directions)) + (len(json.dumps(tool_specs())) if fmt == "tools" else 0)
    low_in = (fixed + OBS_CHARS) / CHARS_PER_TOKEN
    high_in = HIGH_MARGIN * (fixed + OBS_CHARS + MEMORY_TURNS * MEMORY_TURN_CHARS) / CHARS_PER_TOKEN
    effort = seat.get("reasoning") if reasoning_on(seat.get("reasoning")) else "off"
    ceiling = seat.get("max_tokens") or DEFAULT_MAX_TOKENS["on" if effort != "off" else "off"]
    low_out, high_out = OUTPUT_TOKENS[effort]
    return {"input": (int(low_in), int(high_in)), "output": (min(low_out, ceiling), min(high_out, ceiling))}


def estimate(roster: list[dict], season_ticks: int, trials: int = 1, *, prices: PriceTable | None = None,
             key_prices: dict[str, list[float]] | None = None) -> dict:
    """USD low/high of a launch: each seat's assumed tokens per turn x season ticks x trials, priced.

    Returns {"low", "high", "seats": [{seat, model, provider, priced, agent_turns, usd: {low, high}}]};
    priced: table, fallback, free or key (the account's self-hosted key carries its own price)."""
    prices = prices or PriceTable.shipped()
    seats, low, high = [], 0.0, 0.0
    turns = int(season_ticks) * int(trials)
    for i, seat in enumerate(roster):
        provider = seat.get("provider") or "router"
        pin, pout, source = prices.lookup(provider, seat["model"])
        if source == "free" and provider in (key_prices or {}) and provider != LOCAL:
            pin, pout, source = *key_prices[provider], "key"  # a self-hosted server that charges
        if source == "free":
            lo = hi = 0.0
        else:
            t = turn_tokens(seat)
            lo = turns * (t["input"][0] * pin + t["output"][0] * pout) / 1e6
            hi = turns * (t["input"][1] * pin + t["output"][1] * pout) / 1e6
        low, high = low + lo, high + hi
        seats.append({"seat": i, "model": seat["model"], "provider": provider, "priced": source,
                      "agent_turns": turns, "usd": {"low": round(lo, 6), "high": round(hi, 6)}})
    return {"low": round(low, 6), "high": round(high, 6), "seats": seats}
