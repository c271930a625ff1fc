"""The actors every head of one service uses (the agents' exchange, the recorder, the compactor), found by
name in the service's Ray namespace rather than started once per head.

Every head on one store reads one service id from it (leases.service_id): one namespace per service. On
a cluster the head joined (`--ray-address`) the actors are detached, so a head's death leaves them to the
others; on a private Ray, which dies with its process, they are the head's own, under names of its own.
Every name carries the package's version: in a rolling upgrade each version's heads call actors running
their own code, never one whose methods may have changed.
"""
from __future__ import annotations

import secrets
import threading

from orchestrator.store import leases

PREFIX = "studio-"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("scenario-studio")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "source"


VERSION = _version()


class Shared:
    def __init__(self, store, detached: bool):
        self.store, self.detached = store, detached
        self._own = "" if detached else "-" + secrets.token_hex(6)
        self._namespace: str | None = None
        self._lock = threading.Lock()

    @property
    def namespace(self) -> str:
        with self._lock:
            if self._namespace is None:
                with self.store.write() as c:
                    self._namespace = PREFIX + leases.service_id(c, secrets.token_hex(8))
            return self._namespace

    def options(self, name: str) -> dict:
        """Actor options that find `name` if some head started it already, and start it otherwise."""
        return {"name": self._named(name), "namespace": self.namespace, "get_if_exists": True,
                **({"lifetime": "detached"} if self.detached else {})}

    def address(self, name: str) -> str:
        """namespace/name: how a job names an actor for a worker (`find`)."""
        return f"{self.namespace}/{self._named(name)}"

    def _named(self, name: str) -> str:
        return f"{name}-v{VERSION}{self._own}"

    def kill(self, handle) -> None:
        """A head that stops ends an actor only when it is the head's own (a private Ray)."""
        if handle is not None and not self.detached:
            import ray

            ray.kill(handle, no_restart=True)


def find(address: str):
    """The actor a job names (`Shared.address`), from a worker."""
    import ray

    namespace, _, name = address.rpartition("/")
    return ray.get_actor(name, namespace=namespace or None)


def joined(ray_address: str | None) -> bool:
    """Whether this head joins a cluster it did not start (its actors then outlive it)."""
    import os

    return bool(ray_address or os.environ.get("RAY_ADDRESS"))
