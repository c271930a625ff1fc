"""docs/mcp.md's example refusals are what the service answers: the worked session's `create_scenario`
with a season too long, called through the official client, and the envelope the page quotes for it."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.mcp.conftest import call, connect
from tests.runs.conftest import account

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
CALL = re.compile(r"^create_scenario (\{.*\})\n\s+-> isError: (\{.*\})$", re.M)


def _prose(text: str) -> str:
    """The page as a reader sees it: a paragraph's lines joined by one space."""
    return re.sub(r"\n[ \t]*(?=\S)", " ", text)


@pytest.mark.anyio
async def test_the_pages_example_refusal_is_the_services_answer(idle):
    text = DOC.read_text()
    (args, quoted), = [m.groups() for m in CALL.finditer(text) if "isError" in m.group(0)]
    async with connect(idle, account(idle.core)) as client:
        is_error, answer = await call(client, "create_scenario", json.loads(args))
    assert is_error
    # the worked session abridges the message after its first clause ("; ...")
    code, message = re.fullmatch(r'\{"error":"(\w+)","message":"(.*)"\}', quoted).groups()
    assert answer["error"] == code and answer["message"].startswith(message.removesuffix("; ...").removesuffix("..."))
    # "Results and errors" quotes the whole envelope for the same input
    whole = json.dumps(answer, separators=(",", ":"))
    assert whole in _prose(text), f"docs/mcp.md should quote {whole}"
