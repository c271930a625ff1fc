"""What the whole session shares: one private local Ray, started by the first test that needs it."""
import pytest

from orchestrator import workers
from orchestrator.workers import init_ray

# Ray's CPU count here is a scheduling pool, not cores: several test servers of this session hold
# their workers at once (each asks for one or two), and a pool they exhaust hangs the next one.
RAY_POOL = 16


@pytest.fixture(scope="session")
def ray_pool():
    # A dispatcher sizes its model workers by the node's CPUs: by this pool's, every test server would
    # start four processes (imports, kernels) where `studio serve` on a machine of up to seven cores
    # starts one. One per server, as there; a model worker plays a thousand matches at once.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(workers, "CPUS_PER_MODEL_WORKER", RAY_POOL)
        init_ray(num_cpus=RAY_POOL)
        yield
        import ray

        ray.shutdown()
