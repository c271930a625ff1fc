"""The one parser of integer parameters (orchestrator.validation.integer_param), and the service
functions that take one from a query string, a path or a tool argument."""
from __future__ import annotations

import pytest

from orchestrator.errors import DomainError
from orchestrator.runs import analysis, service
from orchestrator.validation import integer_param


def _refused(call) -> DomainError:
    with pytest.raises(DomainError) as e:
        call()
    return e.value


def test_a_query_string_and_a_json_integer_read_the_same():
    assert integer_param("25", "limit", 1, 100) == integer_param(25, "limit", 1, 100) == 25
    assert integer_param(None, "limit", 1, 100, default=20) == 20
    assert integer_param(None, "seat", 0, 3) is None


@pytest.mark.parametrize("value", ["0", "101", "-5", " 5", "+5", "5.0", "²", "٣", "1" * 12, "", True, 2.0, [5]])
def test_anything_but_an_integer_in_range_is_refused_with_the_range(value):
    e = _refused(lambda: integer_param(value, "limit", 1, 100))
    assert (e.code, e.message) == ("bad_request", "limit: send an integer from 1 to 100")


def test_a_caller_names_its_own_code_and_words():
    e = _refused(lambda: integer_param("x", "wait_ms", 0, 30_000, code="bad_actions", hint="send milliseconds"))
    assert (e.code, e.message) == ("bad_actions", "wait_ms: send milliseconds")


def test_a_non_ascii_digit_is_a_bad_request_not_an_internal_error(core, principal):
    """'²' passes str.isdigit() but not int(): the leaderboard's own parser let it through to int(),
    which raised ValueError (a 500 internal_error) instead of refusing it."""
    p, _, _ = principal("pro")
    e = _refused(lambda: analysis.leaderboard(core, p, scenario_id="svc:custom-base-v1", resamples="²"))
    assert (e.code, e.message) == ("bad_request", "resamples: should be an integer from 100 to 2000")


def test_the_services_keep_their_words(core, principal):
    p, _, _ = principal("pro")
    e = _refused(lambda: service.list_runs(core, p, limit="0"))
    assert e.message == "limit: send an integer from 1 to 100"
    assert service.list_runs(core, p, limit="100") == {"runs": [], "next_cursor": None}
