"""The service's private Ray listens on loopback only: its ports carry task traffic without a login."""
import ipaddress
import os

import psutil
import ray


def _listening(pids: set[int]) -> list:
    return [c.laddr for c in psutil.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN and c.pid in pids]


def test_every_port_of_the_local_ray_is_on_loopback(ray_pool):
    @ray.remote
    class Echo:
        def ping(self) -> int:
            return os.getpid()

    actor = Echo.remote()
    worker_pid = ray.get(actor.ping.remote())
    me = psutil.Process()
    pids = {me.pid, worker_pid, *(p.pid for p in me.children(recursive=True))}
    addresses = _listening(pids)
    assert len(addresses) >= 3  # the GCS, the raylet and the actor's worker at least
    outside = [a for a in addresses if not ipaddress.ip_address(a.ip.removeprefix("::ffff:")).is_loopback]
    assert outside == []
    assert ray.get_runtime_context().gcs_address.startswith("127.0.0.1:")
    ray.kill(actor)
