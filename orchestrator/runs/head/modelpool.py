"""The model workers: how many each node holds (workers.model_nodes), and where each one really is.

A model worker is asked for a node with soft affinity, so that a node that left takes none; the
scheduler may then place it on another node, as Ray does when a loaded node is slow to start
processes (two workers asked for two nodes may even swap). A worker gets matches only once it has
said where it is: it stays if that node holds fewer workers than it should, and goes otherwise (it
has played nothing), and the next growth asks again for the node still without one. Without this, a
node could be left with no model worker while the head plays its share of the model matches.
"""
from __future__ import annotations

import logging
from collections import Counter

import ray
from ray.exceptions import RayError

from orchestrator.workers import model_nodes, model_worker

log = logging.getLogger("studio.dispatcher")


class ModelPool:
    def __init__(self, wake):
        self.ready: list = []     # workers that get matches, each on a node that should hold it
        self.starting: dict = {}  # its node() call -> a worker that has not said where it is yet
        self.node: dict = {}      # id(worker) -> the node it was asked for (then: the node it is on)
        self._wake = wake         # called on a Ray thread when a worker says where it is

    @property
    def workers(self) -> list:
        """Every worker of the pool, ready or starting."""
        return self.ready + list(self.starting.values())

    def nodes(self) -> list[str]:
        """The live nodes, each once per model worker it should hold."""
        return model_nodes()

    def grow(self) -> None:
        """Start a worker for each node that should hold one more (on start, for nodes that join, and
        after a worker was lost or placed on another node)."""
        lacking = Counter(self.nodes())
        lacking.subtract(self.node.values())
        for node, n in lacking.items():
            for _ in range(n):
                self._start(node)

    def _start(self, node: str | None) -> None:
        w = model_worker(node)
        ref = w.node.remote()  # answered once its process has started and loaded what it plays with
        self.starting[ref] = w
        self.node[id(w)] = node
        ref.future().add_done_callback(lambda _: self._wake())

    def settle(self) -> None:
        """Workers that said where they are join the ready ones, or go when their node is full."""
        if not self.starting:
            return
        answered = ray.wait(list(self.starting), num_returns=len(self.starting), timeout=0)[0]
        if not answered:
            return
        room = Counter(self.nodes())
        room.subtract(self.node[id(w)] for w in self.ready)
        placed = []
        for ref in answered:
            w = self.starting.pop(ref)
            asked = self.node.pop(id(w))
            try:
                placed.append((w, asked, ray.get(ref)))
            except RayError:  # it died starting: the next growth starts another
                log.warning("a model worker for node %s died while starting", asked)
        for w, asked, there in sorted(placed, key=lambda p: p[1] != p[2]):  # those where asked first
            if room[there] <= 0:
                log.warning("a model worker asked for node %s started on %s, which has its own: it goes",
                            asked, there)
                ray.kill(w)
                continue
            room[there] -= 1
            self.node[id(w)] = there
            self.ready.append(w)

    def lost(self, worker) -> bool:
        """Drop a dead worker if it is one of the pool's (its node gets another at the next growth)."""
        if not any(w is worker for w in self.ready):
            return False
        self.ready = [w for w in self.ready if w is not worker]
        self.node.pop(id(worker), None)
        return True

    def stop(self) -> None:
        for w in self.workers:
            ray.kill(w)
        self.ready, self.starting, self.node = [], {}, {}
