"""A 2-node loopback Ray cluster per test module (tests/cluster/harness.py)."""
import pytest

from tests.cluster.harness import LoopbackCluster


@pytest.fixture(scope="module")
def cluster():
    c = LoopbackCluster(nodes=2)
    yield c
    c.shutdown()
