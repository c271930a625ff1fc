"""A seat's coroutine run from an arena game's thread (the arena's model seats and its agent seats
share it)."""
from __future__ import annotations

import asyncio


def on_loop(loop: asyncio.AbstractEventLoop, coro):
    """Run coro on a seat's loop from the game's thread: a model worker's running loop, busy with other
    matches (the game's thread waits), or a loop of the game's own."""
    if loop.is_running():
        return asyncio.run_coroutine_threadsafe(coro, loop).result()
    return loop.run_until_complete(coro)
