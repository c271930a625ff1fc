"""Long-polls of one process shared per seat: however many callers wait on one agent seat's turn, the
process has one ask of that seat out to the exchange actor at a time, and every waiter is answered
from its one answer. A turn that opens then costs one actor call and each waiter only a wake-up,
instead of an actor call per waiter, which kept the event loop busy for seconds while a thousand
waiters connected. The exchange still hears that the agent is in touch: an ask that is out waits
only while the seat has no open turn, so a waiter joining it adds nothing the exchange has not heard
since the turn opened.
"""
from __future__ import annotations

import asyncio
import weakref

SHARED_WAIT_MS = 30_000  # what a shared ask waits for, the longest a caller may ask (turns.MAX_WAIT_MS)

# event loop -> {(exchange, run id, seat): the ask out}: a future belongs to the loop it was made on
_out: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _shared(exchange, run_id: str, seat: int) -> asyncio.Future:
    loop = asyncio.get_running_loop()
    out = _out.setdefault(loop, {})
    key = (id(exchange), run_id, seat)
    fut = out.get(key)
    if fut is None or fut.done():
        fut = out[key] = asyncio.ensure_future(_ask(exchange, run_id, seat))
        fut.add_done_callback(lambda f: out.pop(key, None) if out.get(key) is f else None)
    return fut


async def _ask(exchange, run_id: str, seat: int) -> dict:
    return await exchange.ask.remote(run_id, seat, SHARED_WAIT_MS)


async def ask(exchange, run_id: str, seat: int, wait_ms: int) -> dict:
    """The exchange's answer to `ask(run_id, seat, wait_ms)`, shared with every other caller of this
    process waiting on the same seat. wait_ms 0 asks on its own: it wants the seat as it is now."""
    if wait_ms <= 0:
        return await exchange.ask.remote(run_id, seat, 0)
    loop = asyncio.get_running_loop()
    until = loop.time() + wait_ms / 1000
    while True:
        fut = _shared(exchange, run_id, seat)
        try:
            got = await asyncio.wait_for(asyncio.shield(fut), max(0.0, until - loop.time()))
        except TimeoutError:
            return {"status": "waiting"}
        if got["status"] != "waiting" or loop.time() >= until:
            return got
