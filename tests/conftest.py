"""What the whole session shares: one private local Ray, started by the first test that needs it;
and the tiers every test is marked with (tests/tiers.py)."""
import asyncio

import pytest

from orchestrator import workers
from orchestrator.workers import init_ray
from tests import postgres, scheduling, tiers

# Ray's CPU count here is a scheduling pool, not cores: several test servers of this session hold
# their workers at once (each asks for one or two), and a pool they exhaust hangs the next one.
RAY_POOL = 16


@pytest.fixture(scope="session")
def ray_pool():
    # A dispatcher sizes its model workers by the node's CPUs: by this pool's, every test server would
    # start four processes (imports, kernels) where `studio serve` on a machine of up to seven cores
    # starts one. One per server, as there; a model worker plays a thousand matches at once.
    tiers.refuse("Ray")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(workers, "CPUS_PER_MODEL_WORKER", RAY_POOL)
        init_ray(num_cpus=RAY_POOL)
        yield
        import ray

        ray.shutdown()


@pytest.fixture(scope="session")
def shared_srv(tmp_path_factory, ray_pool):
    """One server that plays runs, on tests/runs' defaults, for every folder whose tests need no
    config of their own (tests/runs' `srv`, the API's response shapes): each test on its own account."""
    from tests.runs.conftest import start

    s = start(tmp_path_factory.mktemp("played") / "data")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def shared_srv_pg(tmp_path_factory, ray_pool):
    """The same server with its control plane on PostgreSQL (`[store] url`): a database of its own."""
    from tests.runs.conftest import CONFIG, start

    if postgres.server_url() is None:
        pytest.skip(postgres.HOW)
    with postgres.database() as url:
        s = start(tmp_path_factory.mktemp("played-pg") / "data", CONFIG + f'\n[store]\nurl = "{url}"\n')
        yield s
        s.stop()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`pytest -n 2` (`make test`): the units of tests/scheduling.py, to whichever process is free."""
    return scheduling.scheduler(config, log)


# before -m selects: the markers must be on the items when pytest's own hook reads them
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        marked = {m.name for m in item.iter_markers() if m.name in tiers.TIERS}
        try:
            found = tiers.tiers_of(item.path, item.fixturenames, marked)
        except ValueError as e:
            raise pytest.UsageError(str(e)) from None
        for tier in sorted(found - marked):
            item.add_marker(tier)
    if hasattr(config, "workerinput"):  # an xdist process: its collection is the order units are handed out in
        try:
            scheduling.heaviest_first(items)
        except ValueError as e:
            raise pytest.UsageError(str(e)) from None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """While a unit test runs (its fixtures' setup included), what starts a server or Ray refuses."""
    tiers.running_unit(item.nodeid if item.get_closest_marker(tiers.UNIT) else None)
    try:
        return (yield)
    finally:
        tiers.running_unit(None)


@pytest.fixture(autouse=True)
def _unit_leaves_no_ray(request):
    """Ray starts by itself on a first remote call: a unit test must not have made one."""
    before = tiers.ray_running()
    yield
    if request.node.get_closest_marker(tiers.UNIT) and not before and tiers.ray_running():
        pytest.fail(f"{request.node.nodeid} is marked unit but started Ray", pytrace=False)


_PG_OFF = pytest.StashKey[str | None]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    if not hasattr(config, "workerinput"):
        config.stash[_PG_OFF] = postgres.decide()


@pytest.fixture(autouse=True)
def _leaves_asyncio_unpatched():
    """nest_asyncio2 (which inspect_ai applies when called inside a running loop) patches asyncio for
    the whole process, and later tests in it hung: the test that applies it fails, named."""
    before = hasattr(asyncio, "_nest_patched")
    yield
    if not before and hasattr(asyncio, "_nest_patched"):
        pytest.fail("this test left asyncio patched by nest_asyncio2 (inspect_ai called inside a running "
                    "loop, e.g. Playwright's sync API): call it on a thread of its own", pytrace=False)


def pytest_report_header(config):
    """One line saying whether the PostgreSQL tier runs here, and how to enable it when it does not."""
    if config.option.collectonly:
        return None
    if postgres.server_url():
        return "postgres tier: on"
    reason = config.stash.get(_PG_OFF, None)
    return f"postgres tier: off ({reason}); {postgres.HOW}" if reason else f"postgres tier: off; {postgres.HOW}"


@pytest.fixture
def pg_url():
    """An empty PostgreSQL database of this test's own; its URL."""
    if postgres.server_url() is None:
        pytest.skip(postgres.HOW)
    with postgres.database() as url:
        yield url
