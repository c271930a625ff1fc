"""A private Ray whose node misses Ray's fixed 30 s to register (a loaded machine) is started again,
not the end of `studio serve`; any other failure to start is raised at once."""
import subprocess
import sys

CHILD = """
import ray
from orchestrator import workers
real, tries = ray.init, []
def slow_once(*a, **k):
    tries.append(1)
    if len(tries) == 1:
        raise Exception("The current node timed out during startup. This could happen because ...")
    return real(*a, **k)
ray.init = slow_once
workers.init_ray(num_cpus=1)
print(len(tries), ray.cluster_resources()["CPU"])
ray.shutdown()
"""

REFUSED = """
import ray
from orchestrator import workers
tries = []
def broken(*a, **k):
    tries.append(1)
    raise Exception("something else")
ray.init = broken
try:
    workers.init_ray(num_cpus=1)
except Exception as e:
    print(len(tries), e)
"""


def test_a_node_start_that_timed_out_is_tried_again():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split()[-2:] == ["2", "1.0"]


def test_another_failure_to_start_is_not_retried():
    out = subprocess.run([sys.executable, "-c", REFUSED], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "1 something else", out.stderr[-3000:]
