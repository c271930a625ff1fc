"""What the whole session shares: one private local Ray, started by the first test that needs it."""
import pytest

from orchestrator.workers import init_ray

# Ray's CPU count here is a scheduling pool, not cores: several test servers of this session hold
# their workers at once (each asks for one or two), and a pool they exhaust hangs the next one.
RAY_POOL = 16


@pytest.fixture(scope="session")
def ray_pool():
    init_ray(num_cpus=RAY_POOL)
    yield
    import ray

    ray.shutdown()
