"""`studio prices update`: a router's own model list as the service's price table.

Reads GET {base}/models with a stored router key, as OpenRouter answers it (`data[].pricing` in USD
per token, as strings), following `links.next` only while it stays on the key's origin, since the
request carries the key (one elsewhere is named in `refused`). Prices that are not non-negative
numbers (a router's "auto" model says -1) are left out, and one past MAX_PER_MTOK (it would be
infinite per million) is reported in `skipped`. The rows go to the data dir's override table, dated
by the service's clock, which the service reads over the shipped table from its next estimate on.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import math
import httpx

from orchestrator.seats import keys
from orchestrator.accounts import by_email
from orchestrator.core import Core
from orchestrator.errors import AdminError
from orchestrator.seats.prices import write_override
from orchestrator.seats.client import new_client
from orchestrator.seats.keyed import Keyed, OffOrigin, moved
from orchestrator.provider_kinds import spec

TIMEOUT_S = 30.0
MAX_PAGES = 20
PER_TOKEN = ("prompt", "completion", "input_cache_read", "input_cache_write")


MAX_PER_MTOK = 100_000.0  # USD per million tokens: past any model's price, so a larger one is an error


def priced(m) -> tuple[str, list[float] | None, str | None]:
    """One entry of a models answer's `data` -> (model id, its row in USD per M [in, out(, cached in,
    cache write)], why it is left out); the row is None when it is left out. A price must be a number
    (or a numeric string) from 0 to MAX_PER_MTOK per million tokens: a router's "auto" model (-1) and a
    price JSON cannot carry once scaled (1e305 per token) are left out, the latter reported."""
    if not isinstance(m, dict) or not isinstance(m.get("id"), str) or not isinstance(m.get("pricing"), dict):
        return "", None, None
    got = {}
    for k in PER_TOKEN:
        value = m["pricing"].get(k)
        try:
            x = float(value) * 1e6
        except (TypeError, ValueError, OverflowError):
            x = None
        if x is not None and x < 0:  # the router's way of saying "no fixed price"
            x = None
        elif x is not None and not (math.isfinite(x) and x <= MAX_PER_MTOK):
            return m["id"], None, (f"pricing.{k} {value!r} USD per token is not a price from 0 to "
                                   f"{MAX_PER_MTOK / 1e6} per token")
        got[k] = None if x is None else round(x, 6)
    prompt, completion, read, write = (got[k] for k in PER_TOKEN)
    if prompt is None or completion is None:
        return m["id"], None, None
    row = [prompt, completion]
    if read is not None or write is not None:
        row += [prompt if read is None else read, prompt if write is None else write]
    return m["id"], row, None


def rows(data, skipped: list | None = None) -> dict[str, list[float]]:
    """model id -> [USD per M in, out(, cached in, cache write)] of a models answer's `data`; entries
    whose price is out of range are appended to `skipped` as {model, why}."""
    out = {}
    for m in data if isinstance(data, list) else []:
        model, row, why = priced(m)
        if why is not None and skipped is not None:
            skipped.append({"model": model, "why": why})
        if row is not None:
            out[model] = row
    return out


async def fetch(keyed: Keyed, *, private_ok: bool,
                skipped: list | None = None) -> tuple[dict[str, list[float]], list[str]]:
    """The priced rows of every page, and the pages not asked (a link to another origin), each said."""
    found: dict[str, list[float]] = {}
    url = keyed.url("/models")
    async with new_client(1, private_ok=private_ok) as client:
        for _ in range(MAX_PAGES):
            try:
                r = await keyed.send(client, "GET", url, timeout=TIMEOUT_S)
            except httpx.HTTPError as e:
                raise AdminError(f"GET {url}: {e or type(e).__name__}") from None
            if r.is_redirect:
                raise AdminError(f"GET {url}: HTTP {r.status_code}, {moved(r)}")
            if not r.is_success:
                raise AdminError(f"GET {url}: HTTP {r.status_code}: {r.text[:200]}")
            try:
                body = r.json()
            except ValueError:
                raise AdminError(f"GET {url}: the answer is not JSON") from None
            found.update(rows(body.get("data") if isinstance(body, dict) else None, skipped))
            links = body.get("links") if isinstance(body, dict) else None
            nxt = links.get("next") if isinstance(links, dict) else None
            if not isinstance(nxt, str) or not nxt:
                return found, []
            try:
                url = keyed.follow(url, nxt)
            except OffOrigin as e:
                return found, [f"links.next of GET {url}: {e}"]
    return found, []


def update(core: Core, *, email: str | None = None) -> dict:
    """Read the router's list with the account's router key (email) or the platform's, and write it as
    the data dir's price table. Returns {as_of, models, source, path, refused, skipped}: refused says
    each page that was not asked (a link to another origin), whose models are left out; skipped each
    model whose price was out of range ({model, why})."""
    owner = by_email(core, email).id if email else keys.PLATFORM
    info = keys.held(core, owner).get("router")
    if info is None:
        whose = f"the account {email}" if email else "the platform"
        raise AdminError(f"{whose} holds no router key; store one with `studio key set --provider router` "
                         f"({'--email ' + email if email else '--platform'})")
    keyed = Keyed(info["base_url"] or spec("router").base_url,
                  {"Authorization": f"Bearer {keys.plaintext(core, owner, 'router') or ''}"})
    url = str(keyed.url("/models"))
    skipped: list[dict] = []
    models, refused = asyncio.run(fetch(keyed, private_ok=keys.private_ok(core, owner, "router"), skipped=skipped))
    if not models:
        raise AdminError(f"GET {url}: no model with a price in the answer; the price table is unchanged"
                         + "".join(f"; {r}" for r in refused))
    as_of = dt.datetime.fromtimestamp(core.clock.now_ms() / 1000, dt.UTC).date().isoformat()
    path = write_override(core.data_dir, models, as_of, url)
    return {"as_of": as_of, "models": len(models), "source": url, "path": str(path), "refused": refused,
            "skipped": skipped}
