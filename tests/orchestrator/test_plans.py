"""Plan table (docs/api.md, "Authentication, scopes, limits") and the operator's override in config.toml."""
from __future__ import annotations

import pytest

from orchestrator.core import Core
from orchestrator.plans import DEFAULT_PLANS, ConfigError, load_plans


def test_default_table_is_spec_limits():
    column = {k: [DEFAULT_PLANS[p][k] for p in ("free", "starter", "pro", "lab")] for k in DEFAULT_PLANS["free"]}
    assert column["access_tokens"] == [1, 3, 10, 25]
    assert column["requests_per_minute"] == [60, 120, 300, 600]
    assert column["saved_scenarios"] == [5, 20, 50, 500]
    assert column["saved_skills"] == [5, 20, 50, 500]
    assert column["seats_per_run"] == [4, 6, 8, 16]
    assert column["ticks_per_run"] == [300, 600, 2000, 2000]
    assert column["series_max_trials"] == [2, 4, 10, 50]
    assert column["queued_runs"] == [1, 2, 3, 10]
    assert column["agent_turns_per_month"] == [5000, 12000, 60000, None]
    assert column["api_access"] == ["read", "full", "full", "full"]
    # beyond the API's table: what one launch may ask to grade (issue 38), not reported by GET /me
    assert column["graded_decisions_per_launch"] == [2400, 15000, 50000, 200000]


def test_override_from_config_toml(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "config.toml").write_text(
        '[plans.free]\nsaved_scenarios = 9\napi_access = "full"\n[plans.pro]\nagent_turns_per_month = "unlimited"\n')
    core = Core.open(tmp_path / "d")
    assert core.plan("free")["saved_scenarios"] == 9 and core.plan("free")["api_access"] == "full"
    assert core.plan("pro")["agent_turns_per_month"] is None
    assert core.plan("starter") == {**DEFAULT_PLANS["starter"], "id": "starter"}
    assert DEFAULT_PLANS["free"]["saved_scenarios"] == 5  # the defaults themselves are untouched


@pytest.mark.parametrize("config", [
    {"plans": {"gold": {"saved_scenarios": 1}}},
    {"plans": {"free": {"saved_scenarios": -1}}},
    {"plans": {"free": {"saved_scenarios": "many"}}},
    {"plans": {"free": {"colour": 1}}},
    {"plans": {"free": {"api_access": "write"}}},
])
def test_bad_config_is_refused_with_the_field_named(config):
    with pytest.raises(ConfigError) as e:
        load_plans(config)
    assert "config.toml" in str(e.value)


@pytest.mark.parametrize("value", ['"long"', "0", "-1", "601", "true"])
def test_a_bad_store_busy_timeout_stops_the_start_naming_it(tmp_path, value):
    (tmp_path / "config.toml").write_text(f"[store]\nbusy_timeout_s = {value}\n")
    with pytest.raises(ConfigError, match="\\[store\\] busy_timeout_s: should be a number of seconds"):
        Core.open(tmp_path)
    (tmp_path / "config.toml").write_text("[store]\nbusy_timeout_s = 0.5\n")
    assert Core.open(tmp_path).store.busy_timeout_s == 0.5


@pytest.mark.parametrize("setting", ["[runs]\nmin_tick_ms = inf", "[runs]\nrecord_patience_s = nan",
                                     "[limits]\nsign_in_per_minute = -inf", "[store]\nbusy_timeout_s = inf"])
def test_a_setting_that_is_not_a_finite_number_stops_the_start_naming_it(tmp_path, setting):
    """Issue 50: config is a number from outside too; TOML writes inf and nan, no setting takes them."""
    (tmp_path / "config.toml").write_text(setting + "\n")
    section, key = setting[1:].split("]\n")[0], setting.split("\n")[1].split(" =")[0]
    with pytest.raises(ConfigError, match=f"config.toml: {section}.{key} should be a finite number"):
        Core.open(tmp_path)
