"""Playing model seats: one SeatPlayer per seat, play_tick for one tick of the whole field.

A tick observes every living external seat, calls all their providers at once, each bounded by
turn_timeout_ms, and submits one tick to the engine. Every turn asked, whatever ended it, writes its
transcript row and goes to the run's recorder as soon as it ends, so a run resumed after a fault
replays those turns through this same code (`to_replay`) instead of asking again. Each seat's
agent_turns, tokens and USD (the router's own stated cost when it gives one, else the price table)
are charged to its entry in the run's ledger.
"""
# How a tick's answers are played:
# - a provider fault makes the seat wait that tick: no answer in time with cause timeout (row a=1,
#   counted in turns.timed_out), any other fault with cause no_reply (a=2, counted in
#   turns.provider_errors); FAULT_TICKS faulted ticks in a row raise SeatFaulted before the tick is
#   submitted, and the run fails naming seat, provider and the last cause;
# - up to actions_per_turn actions are taken from a reply, in order; the rest are ignored;
# - what cannot be read as an action is logged INVALID with a reason; a refusal and a reply cut at its
#   token ceiling are refused whole, with reasons refusal and truncated;
# - a seat that can never play (a rejected key, an unknown model) raises SeatFailed before the tick
#   is submitted: the run fails naming seat and provider.
from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from dataclasses import dataclass, field

from engine.rules import WORLD
from orchestrator.provider_kinds import AGENT
from orchestrator.records.turn import Said
from orchestrator.seats.actions import NO_REPLY_WAIT, TIMEOUT_WAIT, Refused, from_reply
from orchestrator.seats.base import SeatBase
from orchestrator.seats.faults import FaultStreak, ProviderError, SeatFailed, TurnTimeout
from orchestrator.seats.ledger import USAGE_FIELDS, Ledger, new_usage
from orchestrator.seats.observe_text import render_observation
from orchestrator.seats.prices import PriceTable, reply_cost
from orchestrator.seats.prompt import MEMORY_TURNS, compose_directions, scaffold, system_prompt
from orchestrator.seats.client import PooledClient, new_client
from orchestrator.seats.providers import make_chat
from orchestrator.seats.recording import OFF_RECORD, Recorder, nothing_to_replay
from orchestrator.seats.turn import TurnRecord, actions_json
from orchestrator.statuses import CANCELLED, DRAINED


def raw_reply(reply) -> str:
    """The model's reply as it came, in the one encoding the store keeps (`Said`)."""
    return Said.of(reply.text, reply.calls).encode()


class SeatPlayer(SeatBase):
    """One model seat: its provider client, prompt, bounded memory and usage counters.

    seat: the roster entry as resolved at launch (model, provider, format, reasoning, temperature,
    max_tokens, skills as [{id, name, text}], instructions)."""

    def __init__(self, index: int, seat: dict, *, key: str | None, client: PooledClient,
                 base_url: str | None = None, turn_timeout_ms: int = WORLD["turn_timeout_ms"],
                 actions_per_turn: int = 2,
                 prices: PriceTable | None = None, memory_turns: int = MEMORY_TURNS,
                 usd_per_mtok: list[float] | None = None, recorder: Recorder = OFF_RECORD,
                 to_replay: dict[int, dict] | None = None,
                 max_concurrent: int | None = None, usage: dict | None = None):
        super().__init__(index, seat, usage=usage, recorder=recorder, to_replay=to_replay, memory_turns=memory_turns,
                         turn_timeout_ms=turn_timeout_ms)
        self.provider = seat.get("provider") or "router"
        self.format = seat.get("format") or "tools"
        self.directions = compose_directions(seat.get("skills") or [], seat.get("instructions"))
        self.system = system_prompt(self.format, self.directions)
        self.scaffold = scaffold(self.format, self.directions)
        self.chat = make_chat(self.provider, model=self.model, key=key or "", client=client, system=self.system,
                              base_url=base_url,
                              format=self.format, reasoning=seat.get("reasoning"),
                              temperature=seat.get("temperature"), max_tokens=seat.get("max_tokens"),
                              seat=self.label, max_concurrent=max_concurrent)
        self.actions_per_turn = int(actions_per_turn)
        self.prices = prices or shipped_prices()
        self.usd_per_mtok = usd_per_mtok
        self.faults = FaultStreak(self.label, self.provider)
        self.last_error: str | None = None

    async def act(self, observation: dict, deadline: float | None = None) -> list:
        """This tick's actions: action dicts, Refused, or a wait row (np.ndarray) with its cause.
        deadline: event-loop time by which the answer must be in (default: now + turn_timeout_ms).
        Counts the turn and writes its transcript row however it ends; raises SeatFaulted at the
        FAULT_TICKS-th provider fault in a row, SeatFailed when the seat can never play."""
        again = self.replay()
        if again is not None:
            return again
        loop = asyncio.get_running_loop()
        if deadline is None:
            deadline = loop.time() + self.turn_s
        text = render_observation(observation)
        turn = self.ask(text)
        started = loop.time()
        retries_before = self.chat.retries
        try:
            # the deadline is enforced here, so a provider that never answers is counted like any other
            async with asyncio.timeout_at(deadline):
                reply = await self.chat.send(self.memory, text, deadline)
        except TimeoutError:
            return await self._fault(turn, started, retries_before, self.chat.ran_out())
        except ProviderError as e:
            return await self._fault(turn, started, retries_before, e)
        except SeatFailed as e:
            self._missed(turn, started, retries_before, "provider_errors", str(e))
            await self.close_turn(turn, [])
            raise
        except BaseException:  # a cancel while the provider thinks: the turn was asked all the same
            self.unrecorded(turn)
            raise
        self.faults.clear()
        self.turns["answered"] += 1
        self.turns["retries"] += self.chat.retries - retries_before
        turn.input_tokens, turn.output_tokens = reply.input_tokens, reply.output_tokens
        turn.usd = reply_cost(self.prices, self.provider, self.model, reply, self.usd_per_mtok)
        self.charge(turn)
        actions = from_reply(reply, self.format)[: self.actions_per_turn]
        refused = [a for a in actions if isinstance(a, Refused)]
        if refused or not actions:
            self.turns["invalid"] += 1
        turn.reply, turn.latency_ms = raw_reply(reply), round(1e3 * (loop.time() - started), 1)
        turn.actions, turn.refused = actions_json(actions), [r.transcript() for r in refused]
        turn.refusal, turn.truncated = reply.refusal, reply.truncated
        entry = self.chat.remember(text, reply, len(actions))
        self.memory.append(entry)
        await self.close_turn(turn, actions, entry)
        return actions

    async def _fault(self, turn: TurnRecord, started: float, retries_before: int, e: ProviderError) -> list:
        timed_out = isinstance(e, TurnTimeout)
        self._missed(turn, started, retries_before, "timed_out" if timed_out else "provider_errors", str(e))
        out = [TIMEOUT_WAIT if timed_out else NO_REPLY_WAIT]
        await self.close_turn(turn, out)
        self.faults.fault(e)  # raises at the FAULT_TICKS-th in a row
        return out

    def replaying(self, row: dict) -> None:
        self.faults.replayed(row.get("error") is not None)

    def _missed(self, turn: TurnRecord, started: float, retries_before: int, count: str, error: str) -> None:
        self.last_error = error
        self.turns[count] += 1
        self.turns["retries"] += self.chat.retries - retries_before
        turn.error, turn.latency_ms = error, round(1e3 * (asyncio.get_running_loop().time() - started), 1)


@dataclass
class TickReport:
    tick: int                                            # the tick just played
    usage: dict[int, dict] = field(default_factory=dict)  # seat -> usage delta of this tick
    usd: float = 0.0                                     # this tick's spend, all seats
    waits: dict[int, str] = field(default_factory=dict)   # seat -> "timeout" or "no_reply"
    elapsed_ms: float = 0.0
    replayed: bool = False                               # every seat's turn came from the record


async def play_tick(match, players: dict[int, SeatPlayer]) -> TickReport:
    """Observe every living external seat, ask all players at once within their time, submit one tick."""
    t0 = time.perf_counter()
    loop = asyncio.get_running_loop()
    seats = match.external
    missing = [i for i in seats if i not in players]
    if missing:
        raise ValueError(f"no player for external seats {missing}")
    before = {i: dict(players[i].usage) for i in seats}

    async def one(i: int, obs: dict):
        p = players[i]
        p.tick = match.tick
        return await p.act(obs, loop.time() + p.turn_s)  # act keeps the deadline, and counts a miss

    results = await asyncio.gather(*(one(i, match.observe(i)) for i in seats), return_exceptions=True)
    for r in results:  # a seat that cannot play on fails the run first; any other exception is a bug
        if isinstance(r, SeatFailed):
            raise r
    for r in results:
        if isinstance(r, BaseException):
            raise r
    report = TickReport(tick=match.tick, replayed=all(players[i].replayed for i in seats))
    submitted = {}
    for i, acts in zip(seats, results):
        rows = []
        for a in acts:
            if a is TIMEOUT_WAIT:
                report.waits[i] = "timeout"
            elif a is NO_REPLY_WAIT:
                report.waits[i] = "no_reply"
            rows.append(a.row(match.messages) if isinstance(a, Refused) else a)
        submitted[i] = rows
    match.submit(submitted)
    for i in seats:
        delta = {k: players[i].usage[k] - before[i][k] for k in USAGE_FIELDS}
        report.usage[i] = delta
        report.usd += delta["usd"]
    report.elapsed_ms = 1e3 * (time.perf_counter() - t0)
    return report


@dataclass
class Credential:
    """What a seat's client needs from the stored key: the plaintext, the base URL set with it, the
    key's own price [USD per M input, USD per M output] when it carries one, and whether its client may
    connect to private addresses (`private_ok`), and the operator's cap on its
    requests in flight (None: the default)."""
    key: str | None
    base_url: str | None = None
    usd_per_mtok: list[float] | None = None
    private_ok: bool = False
    max_concurrent: int | None = None
    price: list[float] | None = None  # the service's price table's row for the seat's model, if it has one

    def table(self, model: str, base: PriceTable) -> PriceTable:
        """The table the seat meters with: the service's row for its model (read on the head with the
        key, so a table `studio prices update` wrote into the data dir prices what the estimate priced)
        over the worker's shipped table."""
        return base.with_row(model, self.price) if self.price else base


class ModelSeats:
    """Plays a run's model seats for the world's play: `players.play(match, job, usage,
    should_stop, on_tick) -> (stop_reason, spend_usd)`. The event loop and the pooled HTTP clients
    live for one play() call.

    usage: the run's ledger entries (Job.usage()), which every seat charges as its turns end; the spend
    returned and the spend cap's check read them.
    recorder: where every turn goes as it ends, and every seat's totals after every tick played and
    once more when the season ends however it ends; `to_replay`: what
    it recorded before a fault, which a resumed run plays again (Recorder.replay()).
    agent_seat: builds the player of a seat with provider "agent" (`AgentSeat.of`).
    After play(), `transcript` holds every turn's row and `turns` every seat's counts."""

    def __init__(self, credentials: dict[int, Credential], *, prices: PriceTable | None = None,
                 memory_turns: int = MEMORY_TURNS, recorder: Recorder = OFF_RECORD, to_replay: dict | None = None,
                 agent_seat=None, replay_only: bool = False):
        self.credentials, self.prices, self.memory_turns = credentials, prices, memory_turns
        self.replay_only = replay_only  # every turn from to_replay, none asked (a bundle's check)
        self.agent_seat = agent_seat  # (index, job, match, usage=, recorder=, to_replay=) -> an agent seat's player
        self.recorder = recorder
        self.to_replay = to_replay or nothing_to_replay()
        self.transcript: list[dict] = []
        self.turns: dict[int, dict] = {}
        # seat -> [(observation text, reply, actions played)]: a fork's kept seats' memory
        self.memories: dict[int, list] = {}
        self._stopped: asyncio.Future | None = None

    def play(self, match, job, usage: list[dict], should_stop, on_tick,
             should_drain=lambda: False) -> tuple[str, float]:
        return asyncio.run(self.play_async(match, job, usage, should_stop, on_tick, should_drain))

    async def play_async(self, match, job, usage: list[dict], should_stop, on_tick,
                         should_drain=lambda: False, stopped: asyncio.Event | None = None) -> tuple[str, float]:
        """stopped: set when should_stop() turns true (a worker's cancel); a tick waiting on providers
        then ends at once, where without it the tick looks at should_stop every CANCEL_POLL_S."""
        prices = self.prices or shipped_prices()
        ledger = Ledger(usage)
        again: dict[int, dict[int, dict]] = {}  # seat -> tick -> a recorded turn to replay
        for t in self.to_replay["turns"]:
            again.setdefault(t["seat"], {})[t["tick"]] = t
        async with contextlib.AsyncExitStack() as stack:
            players = {}
            for i in match.external:
                if job.seats[i].get("provider") == AGENT:  # the account's own program, over the agent door
                    players[i] = p = self.agent_seat(i, job, match, usage=ledger.entry(i), recorder=self.recorder,
                                                     to_replay=again.get(i))
                    # however the season ends, the agent's waiting calls hear that it did
                    stack.push_async_callback(lambda p=p: p.ended(match.tick - 1 if match.tick else None))
                else:
                    cred = self.credentials.get(i) or Credential(None)
                    # one pool per seat (client.new_client)
                    client = await stack.enter_async_context(new_client(private_ok=cred.private_ok))
                    players[i] = p = SeatPlayer(i, job.seats[i], key=cred.key, base_url=cred.base_url, client=client,
                                                turn_timeout_ms=job.env["turn_timeout_ms"], actions_per_turn=match.apt,
                                                prices=cred.table(job.seats[i]["model"], prices),
                                                memory_turns=self.memory_turns, usd_per_mtok=cred.usd_per_mtok,
                                                recorder=self.recorder, to_replay=again.get(i),
                                                max_concurrent=cred.max_concurrent, usage=ledger.entry(i))
                    for text, reply, played in self.memories.get(i, ()):
                        p.memory.append(p.chat.remember(text, reply, played))
                p.replay_only = self.replay_only
                totals = self.to_replay["seats"].get(i) or self.to_replay["seats"].get(str(i))
                if totals:  # a resumed run: what was metered before the fault, never billed again
                    ledger.resume(i, totals["usage"])
                    p.resume(totals)
            if stopped is not None:
                self._stopped = stack.enter_context(_waiting(stopped))
            try:
                return await self._season(match, job, players, ledger, should_stop, on_tick, should_drain)
            finally:  # whatever ended the season, every seat's tokens so far are metered (they were paid)
                self.turns.update((i, dict(p.turns)) for i, p in players.items())
                self.transcript = sorted((t for p in players.values() for t in p.transcript),
                                         key=lambda t: (t["tick"], t["seat"]))
                await self.recorder.report(match.tick, self._totals(match, job, players))

    async def _season(self, match, job, players, ledger: Ledger, should_stop, on_tick,
                      should_drain) -> tuple[str, float]:
        while not match.done:
            if should_stop():
                return CANCELLED, ledger.usd
            if should_drain():  # the service stops: at this tick boundary every answered turn is recorded
                return DRAINED, ledger.usd
            report = await self._tick(match, players, should_stop, self._stopped)
            if report is None:  # cancelled while waiting on providers: that tick is not played
                return CANCELLED, ledger.usd
            on_tick(match.tick)
            if not report.replayed:  # the live tick; a replayed one changed nothing
                await self.recorder.report(match.tick, self._totals(match, job, players))
            # a stop, not a hold: the tick that crosses the cap is the last one played
            if job.spend_cap_usd is not None and ledger.usd >= job.spend_cap_usd and not match.done:
                return "spend_cap", ledger.usd
        return "season_end", ledger.usd

    @staticmethod
    def _totals(match, job, players) -> dict[int, dict]:
        """Every seat's totals for the recorder: model seats' own, and the ticks the others played (their
        agent turns), so a run that fails or is cancelled after a fault settles every seat's turns."""
        out = {i: p.report() for i, p in players.items()}
        for i in range(len(job.seats)):
            if i not in out:
                out[i] = {"usage": dict(new_usage(), agent_turns=match.tick - match.start_tick), "turns": None}
        return out

    @staticmethod
    async def _tick(match, players, should_stop, stopped: asyncio.Future | None = None) -> TickReport | None:
        """One tick, given up (None) as soon as a cancel arrives, not when the slowest provider answers."""
        task = asyncio.ensure_future(play_tick(match, players))
        if stopped is not None:  # no polling: hundreds of matches on a loop would wake it constantly
            await asyncio.wait((task, stopped), return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                return task.result()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return None
        while True:
            done, _ = await asyncio.wait((task,), timeout=CANCEL_POLL_S)
            if done:
                return task.result()
            if should_stop():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                return None


CANCEL_POLL_S = 0.1  # how often a tick waiting on providers looks for a cancel


@contextlib.contextmanager
def _waiting(event: asyncio.Event):
    """A future done once the event is set, for the whole season (one, not one per tick)."""
    waiter = asyncio.ensure_future(event.wait())
    try:
        yield waiter
    finally:
        waiter.cancel()


@functools.cache
def shipped_prices() -> PriceTable:
    """The shipped price table, read once per process: every match of a worker prices with it."""
    return PriceTable.shipped()
