"""One 2-node loopback Ray cluster for the package (tests/cluster/harness.py): each module joins its own
`studio serve` to it, and a service that stops takes its workers with it."""
import pytest

from tests.cluster.harness import LoopbackCluster


@pytest.fixture(scope="package")
def cluster():
    c = LoopbackCluster(nodes=2)
    yield c
    c.shutdown()
