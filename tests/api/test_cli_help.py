"""`studio ... --help`: every option of every subcommand says what it does, and its default when it has one."""
from __future__ import annotations

import argparse

import pytest

from api.cli import build_parser, main

pytestmark = pytest.mark.unit  # the parser alone, in this process


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, path + (name,))


PARSERS = list(_parsers(build_parser()))


def test_every_subcommand_is_walked():
    paths = {" ".join(p) for p, _ in PARSERS}
    assert {"simulate", "serve", "account create", "account login-link", "token mint", "key set", "outbox list",
            "report"} <= paths


@pytest.mark.parametrize("path,parser", PARSERS, ids=[" ".join(p) or "studio" for p, _ in PARSERS])
def test_every_option_has_help(path, parser):
    bare = [a.option_strings or a.dest for a in parser._actions
            if not isinstance(a, argparse._SubParsersAction) and (a.help is None or not a.help.strip())]
    assert bare == [], f"studio {' '.join(path)}: options without help: {bare}"


def test_help_shows_defaults_and_leaves_out_empty_ones(capsys):
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines at the terminal width
    assert "TCP port to listen on; checked free before any account or token is created (default: 8000)" in out
    assert "(default: 127.0.0.1)" in out and "(default: info)" in out
    assert "(default: None)" not in out and "(default: False)" not in out
    with pytest.raises(SystemExit):
        main(["token", "mint", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "a label to tell the account's tokens apart (default: default)" in out
    with pytest.raises(SystemExit):
        main(["account", "set", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: True)" not in out  # --unverified stores False; its own default is no help
