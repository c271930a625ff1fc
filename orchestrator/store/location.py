"""Where the control plane lives: `[store] url` in config.toml or `STUDIO_STORE_URL` (the environment
wins). Unset, SQLite in the data dir; a `postgresql://` URL, that database. A setting that does not
parse, names another database or cannot be reached is one line naming the setting and the cause (never
the password), raised before anything is created."""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.store.database import Store

if TYPE_CHECKING:
    from orchestrator.store.postgres import PostgresStore

ENV = "STUDIO_STORE_URL"
CONFIG = "config.toml [store] url"


class SettingError(ValueError):
    """The store setting cannot be used; the message is one line, fit to print."""


def setting(config: dict, environ: Mapping[str, str] = os.environ) -> tuple[str, str] | None:
    """(the setting's name, its URL), or None for SQLite in the data dir."""
    url = environ.get(ENV)
    if url:
        return ENV, url
    url = (config.get("store") or {}).get("url")
    if url is None or url == "":
        return None
    if not isinstance(url, str):
        raise SettingError(f"{CONFIG}: should be a postgresql:// URL (got a {type(url).__name__})")
    return CONFIG, url


def pool_size(config: dict) -> int:
    """`[store] pool_size`: the most connections this process holds to PostgreSQL (unused on SQLite)."""
    from orchestrator.store.postgres import POOL_SIZE

    value = (config.get("store") or {}).get("pool_size", POOL_SIZE)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
        raise SettingError(f"config.toml [store] pool_size: should be a whole number of connections from 1 to 1000 "
                           f"(got {value!r})")
    return value


def open_store(data_dir: str | Path, config: dict, busy_timeout_s: float, *,
               environ: Mapping[str, str] = os.environ) -> Store | PostgresStore:
    """The store the setting names, its schema brought up to date; the data dir is created only once
    the store was reached."""
    found = setting(config, environ)
    if found is None:
        return Store(data_dir, busy_timeout_s=busy_timeout_s)
    name, url = found
    import psycopg

    from orchestrator.store import postgres as pg

    try:
        pg.conninfo(url)
    except pg.UrlError as e:
        raise SettingError(f"{name}: {e}") from None
    size = pool_size(config)
    try:
        store = pg.PostgresStore(url, busy_timeout_s, data_dir=data_dir, pool_size=size)
    except psycopg.Error as e:
        raise SettingError(f"{name}: cannot reach the database {pg.redacted(url)}: {_one_line(e, url)}") from None
    Path(data_dir).mkdir(parents=True, exist_ok=True, mode=0o700)
    return store


def check(data_dir: str | Path, config: dict, *, environ: Mapping[str, str] = os.environ) -> str:
    """Raise SettingError unless the configured store can be reached now; its dialect. Creates nothing
    (what a start checks before it takes the data dir)."""
    found = setting(config, environ)
    if found is None:
        return Store.dialect
    name, url = found
    import psycopg

    from orchestrator.store import postgres as pg

    try:
        pg.conninfo(url)
        psycopg.connect(pg.conninfo(url), connect_timeout=10).close()
    except pg.UrlError as e:
        raise SettingError(f"{name}: {e}") from None
    except psycopg.Error as e:
        raise SettingError(f"{name}: cannot reach the database {pg.redacted(url)}: {_one_line(e, url)}") from None
    return pg.PostgresStore.dialect


def _one_line(e: BaseException, url: str) -> str:
    from orchestrator.store import postgres as pg

    text = str(e).replace(url, pg.redacted(url))
    password = pg.password(url)
    if password:
        text = text.replace(password, "***")
    return re.sub(r"\s+", " ", text).strip() or type(e).__name__
