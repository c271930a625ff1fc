"""Every single-field edit of a bundle is found: Hypothesis picks one value anywhere in it (the
manifest, or a turn's line: a reply's text, an action, a seed, a roster entry, a score, a hash),
changes or removes it, and `studio verify` must answer exit 1 with a divergence, never verified and
never "another engine". The untouched bundles verify; the edits run in this process (the fresh-process
check of untouched bundles is tests/bundles/test_kinds.py)."""
from __future__ import annotations

import io
import json
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator import auth
from orchestrator.bundles import verify
from orchestrator.runs import service
from tests.agents.conftest import play_rest, world_body
from tests.bundles.util import fetched, launched
from tests.runs.conftest import account, local_body, wait_terminal
from tests.runs.test_model_seats import model_account
from tests.seats.fake_provider import FakeProvider

GPT, CLAUDE = "openai/gpt-4o-mini", "claude-haiku-4-5"


@pytest.fixture(scope="module")
def bundles(srv) -> dict[str, bytes]:
    out = {}
    with srv.client(account(srv.core)) as c:
        out["scripted"] = fetched(c, launched(c, local_body(season_ticks=25))["run"]["run_id"])
    with FakeProvider() as fake:
        fake.defaults[GPT] = {"calls": [("move", {"direction": "east"}), ("say", {"text": "hello"})],
                              "usage": (50, 9)}
        fake.defaults[CLAUDE] = {"text": '{"actions": [{"action": "gather"}, {"action": "fly"}]}', "usage": (40, 8)}
        c, _ = model_account(srv, fake)
        with c:
            out["model"] = fetched(c, launched(c, {"scenario_id": "svc:custom-base-v1", "season_ticks": 10, "roster": [
                {"model": GPT, "name": "gpt"}, {"model": CLAUDE, "provider": "anthropic", "name": "claude",
                                                "format": "json"}, {"model": "local/random"}]})["run"]["run_id"])
        fake.defaults["test/column4"] = {"text": '{"move": "4"}', "usage": (30, 3)}  # re-asked once full, then forfeit
        c, _ = model_account(srv, fake)
        with c:
            core = srv.app.state.core
            principal = auth.authenticate(core, c.headers["authorization"].split()[1])
            run_id = service.arena_launch(core, principal, {
                "scenario_id": "arena:connect-four", "env": {"turn_timeout_ms": 5000},
                "roster": [{"model": "test/column4", "name": "m", "format": "json"}, {"model": "local/random"}]})
            assert wait_terminal(c, run_id["run"]["run_id"], timeout=120)["run"]["status"] == "finished"
            out["arena"] = fetched(c, run_id["run"]["run_id"])
    with srv.client(account(srv.core)) as c:
        run = c.post("/api/v1/runs", json=world_body(10)).json()["run"]
        play_rest(c, run["run_id"], 0, lambda turn: [{"action": "gather"}, {"action": "move", "direction": "up"}])
        assert wait_terminal(c, run["run_id"])["run"]["status"] == "finished"
        out["agent"] = fetched(c, run["run_id"])
    return out


def _files(data: bytes) -> dict[str, object]:
    """name -> the manifest's object, or a turns file's list of line objects."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n: json.loads(z.read(n)) if n.endswith(".json") else
                [json.loads(line) for line in z.read(n).decode().splitlines()] for n in z.namelist()}


def _zip(files: dict[str, object]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, value in files.items():
            text = json.dumps(value, indent=1) if name.endswith(".json") else \
                "".join(json.dumps(line) + "\n" for line in value)
            z.writestr(name, text)
    return buf.getvalue()


def _leaves(value, path=()):
    """Every place one edit can touch: each scalar, and each key of an object (to remove it)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield path + (k,), "drop"
            yield from _leaves(v, path + (k,))
    elif isinstance(value, list):
        for k, v in enumerate(value):
            yield from _leaves(v, path + (k,))
    else:
        yield path, "change"


def _changed(old, draw) -> object:
    if isinstance(old, bool):
        return not old
    if isinstance(old, int):
        return old + draw(st.integers(-1000, 1000).filter(bool))
    if isinstance(old, float):
        new = draw(st.floats(allow_nan=False, allow_infinity=False, width=64).filter(lambda f: f != old))
        return new
    if isinstance(old, str):
        return draw(st.text(max_size=12).filter(lambda s: s != old))
    return draw(st.one_of(st.integers(), st.text(max_size=5), st.booleans()))  # None becomes something


@st.composite
def edits(draw, files: dict):
    name = draw(st.sampled_from(sorted(files)))
    places = list(_leaves(files[name]))
    path, how = draw(st.sampled_from(places))
    return name, path, how, (_changed(_get(files[name], path), draw) if how == "change" else None)


def _get(value, path):
    for p in path:
        value = value[p]
    return value


def _edited(files: dict, name: str, path: tuple, how: str, new) -> dict:
    files = json.loads(json.dumps(files))
    parent = _get(files[name], path[:-1])
    if how == "drop":
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return files


KINDS = ["scripted", "model", "arena", "agent"]


@pytest.mark.parametrize("kind", KINDS)
def test_untouched_bundles_verify(bundles, kind):
    report = verify.verify(bundles[kind])
    assert report.status == verify.VERIFIED, report.as_json()
    assert verify.verify(_zip(_files(bundles[kind]))).status == verify.VERIFIED  # rewritten, not edited


@pytest.mark.parametrize("kind", KINDS)
def test_every_single_field_edit_is_found(bundles, kind):
    files = _files(bundles[kind])

    @settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(st.data())
    def one_edit(data):
        name, path, how, new = data.draw(edits(files))
        report = verify.verify(_zip(_edited(files, name, path, how, new)))
        assert report.status == verify.DIVERGES, (name, path, how, new, report.as_json())
        assert report.divergence.what
    one_edit()


def test_the_fields_the_contract_names_are_found_where_they_are(bundles):
    """A reply's text, an action, a seed, a roster entry, a score and a hash, each edited on its own,
    each found, and where it is: the divergence names the match (and the tick and seat of a turn)."""
    files = _files(bundles["model"])
    turns = next(n for n in files if n.startswith("turns/"))
    first = files[turns][0]
    cases = [(turns, (0, "reply"), first["reply"] + " "), (turns, (0, "actions"), []),
             ("manifest.json", ("matches", 0, "seeds", "seed", "value"), 12345),
             ("manifest.json", ("matches", 0, "roster", 0, "model"), CLAUDE),
             ("manifest.json", ("matches", 0, "results", "agents", 0, "fitness_index"), 99.5),
             ("manifest.json", ("matches", 0, "log_sha256"), "0" * 64),
             (turns, (1, "prev"), "f" * 64)]
    for name, path, new in cases:
        report = verify.verify(_zip(_edited(files, name, path, "change", new)))
        assert report.status == verify.DIVERGES, (path, report.as_json())
        d = report.divergence
        assert d.match_id == files["manifest.json"]["matches"][0]["match_id"], (path, d)
        if name == turns:  # the edited turn, or for the hash a turn carries, the turn it names
            k = path[0] - (path[-1] == "prev")
            assert (d.tick, d.seat) == (files[turns][k]["tick"], files[turns][k]["seat"]), (path, d)
