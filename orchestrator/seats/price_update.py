"""`studio prices update`: a router's own model list as the service's price table.

Reads GET {base}/models with a stored router key (the account's, or the platform's; its stored base
URL, else the router's default), as OpenRouter answers it: `data[].id` and `data[].pricing.prompt` /
`.completion` (and `.input_cache_read` / `.input_cache_write` where given) in USD per token, as
strings; a `links.next` page is followed while it stays on the key's origin (orchestrator.seats.keyed):
one on another origin is not asked, and the answer names it in `refused`. Models whose prices are not non-negative numbers (a
router's own "auto" model says -1) are left out. The rows are written, in USD per million tokens, to
the data dir's override table (orchestrator.seats.prices.write_override), dated today by the
service's clock; the service reads it over the shipped table from its next estimate on.
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
from orchestrator.seats.providers import DEFAULT_BASE_URL

TIMEOUT_S = 30.0
MAX_PAGES = 20
PER_TOKEN = ("prompt", "completion", "input_cache_read", "input_cache_write")


def _per_mtok(value) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return round(x * 1e6, 6) if math.isfinite(x) and x >= 0 else None


def rows(data) -> dict[str, list[float]]:
    """model id -> [USD per M in, out(, cached in, cache write)] of a models answer's `data`."""
    out = {}
    for m in data if isinstance(data, list) else []:
        if not isinstance(m, dict) or not isinstance(m.get("id"), str) or not isinstance(m.get("pricing"), dict):
            continue
        prompt, completion, read, write = (_per_mtok(m["pricing"].get(k)) for k in PER_TOKEN)
        if prompt is None or completion is None:
            continue
        row = [prompt, completion]
        if read is not None or write is not None:
            row += [prompt if read is None else read, prompt if write is None else write]
        out[m["id"]] = row
    return out


async def fetch(keyed: Keyed, *, private_ok: bool) -> tuple[dict[str, list[float]], list[str]]:
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
            found.update(rows(body.get("data") if isinstance(body, dict) else None))
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
    the data dir's price table. Returns {as_of, models, source, path, refused}: refused says each page
    that was not asked (a link to another origin), whose models are left out."""
    owner = by_email(core, email)["id"] if email else keys.PLATFORM
    info = keys.held(core, owner).get("router")
    if info is None:
        whose = f"the account {email}" if email else "the platform"
        raise AdminError(f"{whose} holds no router key; store one with `studio key set --provider router` "
                         f"({'--email ' + email if email else '--platform'})")
    keyed = Keyed(info["base_url"] or DEFAULT_BASE_URL["router"],
                  {"Authorization": f"Bearer {keys.plaintext(core, owner, 'router') or ''}"})
    url = str(keyed.url("/models"))
    models, refused = asyncio.run(fetch(keyed, private_ok=keys.private_ok(core, owner, "router")))
    if not models:
        raise AdminError(f"GET {url}: no model with a price in the answer; the price table is unchanged"
                         + "".join(f"; {r}" for r in refused))
    as_of = dt.datetime.fromtimestamp(core.clock.now_ms() / 1000, dt.UTC).date().isoformat()
    path = write_override(core.data_dir, models, as_of, url)
    return {"as_of": as_of, "models": len(models), "source": url, "path": str(path), "refused": refused}
