"""The few pieces of SQL the two databases spell differently, one class per dialect; everything else
the repositories write once. `of(c)` gives the spelling for the connection a repository was handed.

JSON columns are text on both. SQLite reads them with json_extract/json_each (an earlier version's
Infinity or NaN through finite_json); PostgreSQL through the studio_* functions below, which read such
text the same way. A path is given as its keys: ("usage", "usd").
"""
from __future__ import annotations

from typing import Any


class Sqlite:
    name = "sqlite"
    on_true = ""  # what a LEFT JOIN of `elements` ends with

    @staticmethod
    def doc(column: str) -> str:
        """The column's JSON as the JSON functions read it."""
        return f"CASE WHEN json_valid({column}) THEN {column} ELSE finite_json({column}) END"

    @staticmethod
    def plain(column: str) -> str:
        """The column's JSON where it is known to be valid JSON as written."""
        return column

    @staticmethod
    def value(doc: str, *path: str) -> str:
        """A scalar at `path` as SQL gives it (text, number, NULL for a JSON null or a missing key)."""
        return f"json_extract({doc}, '$.{'.'.join(path)}')"

    number = value

    @staticmethod
    def elements(doc: str, alias: str) -> str:
        """A table of the array's elements, one per row in `alias.value` (joined without ON)."""
        return f"json_each({doc}) {alias}"

    @staticmethod
    def valid(column: str) -> str:
        return f"json_valid({column})"

    @staticmethod
    def month(ms: str) -> str:
        """'YYYY-MM' (UTC) of a time in epoch milliseconds."""
        return f"strftime('%Y-%m', {ms} / 1000, 'unixepoch')"

    @staticmethod
    def total(x: str) -> str:
        """A sum that is 0.0 over no rows."""
        return f"TOTAL({x})"

    @staticmethod
    def text_in(column: str) -> str:
        """`column IN` the elements of a JSON array of strings given as one parameter."""
        return f"{column} IN (SELECT value FROM json_each(?))"


class Postgres:
    name = "postgresql"
    on_true = "ON TRUE"

    @staticmethod
    def doc(column: str) -> str:
        return f"studio_json({column})"

    plain = doc

    @staticmethod
    def value(doc: str, *path: str) -> str:
        return f"({doc} #>> '{{{','.join(path)}}}')"

    @staticmethod
    def number(doc: str, *path: str) -> str:
        return f"({doc} #>> '{{{','.join(path)}}}')::numeric"

    @staticmethod
    def elements(doc: str, alias: str) -> str:
        return f"LATERAL studio_elements({doc}) {alias}(value)"

    @staticmethod
    def valid(column: str) -> str:
        return f"studio_json_valid({column})"

    @staticmethod
    def month(ms: str) -> str:
        return f"to_char(to_timestamp(({ms}) / 1000) AT TIME ZONE 'UTC', 'YYYY-MM')"

    @staticmethod
    def total(x: str) -> str:
        return f"COALESCE(SUM({x}), 0)::double precision"

    @staticmethod
    def text_in(column: str) -> str:
        return f"{column} IN (SELECT jsonb_array_elements_text(?::jsonb))"


# What an empty `IN (...)` list holds: SQLite takes `IN ()`, PostgreSQL refuses it as a syntax error.
NOTHING = "SELECT NULL WHERE 1 = 0"


def marks(n: int) -> str:
    """n placeholders for an `IN (...)` list, or a list of nothing."""
    return ",".join("?" * n) if n else NOTHING


def constants(values: tuple[str, ...]) -> str:
    """An `IN` list of the code's own constants (never a caller's text), parenthesised."""
    return "(" + (", ".join(f"'{v}'" for v in values) if values else NOTHING) + ")"


def of(c: Any) -> type[Sqlite] | type[Postgres]:
    return Postgres if getattr(c, "dialect", None) == Postgres.name else Sqlite


# Created (or replaced) by every PostgreSQL start after its migrations. A text that is not JSON as
# PostgreSQL reads it (Infinity, NaN) is read with those numbers as null, as finite_json does; an
# element table of anything but an array is empty.
POSTGRES_FUNCTIONS = r"""
CREATE OR REPLACE FUNCTION studio_json(t text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN t::jsonb;
EXCEPTION WHEN others THEN
    BEGIN
        RETURN regexp_replace(t, '-?\mInfinity\M|\mNaN\M', 'null', 'g')::jsonb;
    EXCEPTION WHEN others THEN
        RETURN 'null'::jsonb;
    END;
END $$;
CREATE OR REPLACE FUNCTION studio_json_valid(t text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF t IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM t::jsonb;
    RETURN true;
EXCEPTION WHEN others THEN
    RETURN false;
END $$;
CREATE OR REPLACE FUNCTION studio_elements(doc jsonb) RETURNS SETOF jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_array_elements(CASE WHEN jsonb_typeof(doc) = 'array' THEN doc ELSE '[]'::jsonb END)
$$;
"""
