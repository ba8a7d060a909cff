"""Runs the games of a plan with model players concurrently, under the providers' limits.

Rounds of one game are sequential; games run in parallel, at most ``workers`` of them playing at
once (:class:`GameSlots`), each started when a slot is free from the (lazy) plan, so a plan of
100,000 games never builds 100,000 coroutines. A game whose request sits out a Retry-After lends
its slot meanwhile (:data:`~harness.calls.retry.LEND_SLOT`), so the endpoints stay busy.
Both players of a round move at the same time when both are models.
One writer task commits what the games record, in batched transactions; a round is
committed with its calls. When the run is asked to stop (Ctrl-C, ``--max-cost``), no new
game or round starts, calls already in flight finish and are recorded, and unfinished games
are marked ``interrupted`` for ``pdbench resume``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from functools import partial
from typing import TYPE_CHECKING

import anyio

from harness.calls.limits import LimiterRegistry
from harness.calls.path import BudgetExhausted, CallFailed, CallPath, Stopped
from harness.calls.record import CallRecord
from harness.calls.retry import LEND_SLOT
from harness.config import ModelAgentConfig
from harness.config.plan import GamePlan, ModelPlan, StrategyPlan
from harness.engine.interrupts import StopFlag
from harness.engine.progress import Progress
from harness.errors import DiskFull
from harness.game.match import Match, play_game
from harness.game.seeds import derive_seed, stream
from harness.players.model.judge import Judge
from harness.players.model.player import GameFailed, LLMAgent, ModelPlayer
from harness.players.model.prompts.builder import PromptBuilder
from harness.players.strategies.base import Strategy
from harness.providers.base import FailureKind, Sample, SamplingParams
from harness.providers.registry import ProviderSettings, make_provider
from harness.states import GameStatus
from harness.store.live import LiveBatch, LiveRecorder

if TYPE_CHECKING:
    import httpx2

FLUSH_EVERY_S = 0.25


class ModelPlayers:
    """One provider, limiter and prompt builder per distinct model configuration, shared by games."""

    def __init__(self, limiters: LimiterRegistry, http_client: httpx2.AsyncClient | None = None) -> None:
        self.limiters = limiters
        self.http_client = http_client
        self._players: dict[str, ModelPlayer] = {}

    def get(self, plan: ModelPlan) -> ModelPlayer:
        key = plan.params_json
        if key not in self._players:
            self._players[key] = self._build(plan.name, plan.config)
        return self._players[key]

    def _build(self, name: str, cfg: ModelAgentConfig) -> ModelPlayer:
        settings = ProviderSettings(
            base_url=cfg.base_url, api_key_env=cfg.api_key_env, key_only_to_configured=bool(cfg.key_only_to_configured)
        )
        provider = make_provider(cfg.model, settings, http_client=self.http_client, service_tier=cfg.service_tier)
        limiter = self.limiters.get(
            provider.endpoint.provider, provider.endpoint.base_url, provider.endpoint.key_id, cfg.limits
        )
        return ModelPlayer(
            name=name,
            provider=provider,
            limiter=limiter,
            prompts=PromptBuilder(cfg.prompts),
            params=SamplingParams(temperature=cfg.temperature, max_tokens=cfg.max_tokens, top_p=cfg.top_p),
            parse=cfg.parse,
            comprehension=cfg.comprehension,
            reply=cfg.reply_schema(),
            judge=None if cfg.judge is None else self._judge(cfg.judge, cfg, settings),
            cache_ttl=cfg.cache_ttl,
        )

    def _judge(self, name: str, cfg: ModelAgentConfig, settings: ProviderSettings) -> Judge:
        """The judge of a player (``parse.judge``): reached like the player when it is of the same provider
        (its base URL and key), else with the environment's settings for its provider."""
        same = name.partition("/")[0] == cfg.model.strip().partition("/")[0]
        provider = make_provider(name, settings if same else None, http_client=self.http_client)
        endpoint = provider.endpoint
        limiter = self.limiters.get(endpoint.provider, endpoint.base_url, endpoint.key_id, cfg.limits)
        return Judge(name=name, provider=provider, limiter=limiter)

    async def aclose(self) -> None:
        for player in self._players.values():
            await player.provider.aclose()
            if player.judge is not None:
                await player.judge.provider.aclose()


BATCH_GAMES = 1000
"""How many games play at once when a model plays in batch mode: each round of every game in flight is one item
of one batch, so the more games, the fewer batches (and waits) a run needs."""


def games_in_flight(limiters: LimiterRegistry, cap: int, *, batched: bool = False) -> int:
    """How many games to play at once: what the endpoints can serve, not the size of the plan.

    A game waits for one answer at a time per model seat, so the endpoints' concurrency (summed over
    the endpoints the run uses) is how many games can move at once; a quarter more keeps every slot
    busy while a game records a round and asks its next question. More would only leave games half
    played when the run is stopped, where these finish one replicate after another (the plan's order)
    so that an interrupted run keeps whole replicates. An endpoint without a concurrency limit leaves
    ``cap`` (``EngineOptions.workers``) as the bound. A run with a model in batch mode (``batched``) plays
    :data:`BATCH_GAMES` at once (or ``cap``, if that is more): a batch is not limited by the endpoint's concurrency.
    """
    if batched:
        return max(cap, BATCH_GAMES)
    limits = [limiter.settings.concurrency for limiter in limiters.limiters().values()]
    if not limits or any(limit is None for limit in limits):
        return cap
    slots = sum(limit for limit in limits if limit is not None)
    return max(1, min(cap, slots + (slots + 3) // 4))


class GameSlots:
    """How many games play at once, counting only games that are not waiting to retry a request.

    A game takes a slot to start and gives it back when it ends; while its requests wait out a Retry-After
    it lends the slot (:meth:`Lease.lent`, once however many of its seats wait), so the next game of the
    plan starts. A game that comes back from its wait plays on at once even if that briefly makes more
    games than slots play: no new game starts until the count is below the size again. At most ``size``
    slots are lent at once, so the games in memory are at most twice the size, and no game ever waits for
    a slot in the middle of its rounds.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.playing = 0
        self.lent_out = 0
        self._freed: anyio.Event | None = None

    async def take(self) -> Lease:
        """Wait until fewer than ``size`` games play, then count one more: the new game's lease."""
        while self.playing >= self.size:
            if self._freed is None or self._freed.is_set():
                self._freed = anyio.Event()
            await self._freed.wait()
        self.playing += 1
        return Lease(self)

    def give_back(self) -> None:
        self.playing -= 1
        if self._freed is not None:
            self._freed.set()


class Lease:
    """One game's slot: lent while any of its requests waits to retry (see :class:`GameSlots`)."""

    def __init__(self, slots: GameSlots) -> None:
        self._slots = slots
        self._waiting = 0  # this game's requests waiting to retry
        self._lent = False

    @contextmanager
    def lent(self) -> Iterator[None]:
        """The slot of a game whose request waits to retry: free for another game meanwhile."""
        slots = self._slots
        self._waiting += 1
        if self._waiting == 1 and slots.lent_out < slots.size:
            self._lent = True
            slots.lent_out += 1
            slots.give_back()
        try:
            yield
        finally:
            self._waiting -= 1
            if self._waiting == 0 and self._lent:
                self._lent = False
                slots.lent_out -= 1
                slots.playing += 1

    def end(self) -> None:
        """The game ended: its slot is free."""
        self._slots.give_back()


class Scheduler:
    """Plays ``plans`` with ``workers`` games at a time into ``recorder``."""

    def __init__(
        self,
        *,
        recorder: LiveRecorder,
        calls: CallPath,
        players: ModelPlayers,
        run_seed: int,
        stop: StopFlag,
        progress: Progress,
        workers: int = 64,
    ) -> None:
        self.recorder = recorder
        self.calls = calls
        self.players = players
        self.run_seed = run_seed
        self.stop = stop
        self.progress = progress
        self.workers = workers
        self._writer_error: BaseException | None = None

    async def run(self, plans: Iterable[GamePlan]) -> None:
        source = iter(plans)
        finished = anyio.Event()
        slots = GameSlots(self.workers)
        async with anyio.create_task_group() as writers:
            writers.start_soon(self._write_periodically, finished)
            loop = asyncio.get_running_loop()
            games = anyio.CancelScope()
            try:
                # A stop closes the limiters (no request waiting for one is sent); a forced stop (Ctrl-C three
                # times) cancels the games, never the writer's batch.
                with (
                    self.stop.on_set(lambda: _soon(loop, self._close_limiters)),
                    self.stop.on_force(lambda: loop.call_soon_threadsafe(games.cancel)),
                    games,
                ):
                    async with anyio.create_task_group() as tg:
                        while not self.stop:
                            lease = await slots.take()
                            plan = None if self.stop else next(source, None)
                            if plan is None:
                                lease.end()
                                break
                            tg.start_soon(self._play_in_slot, plan, lease)
            finally:
                finished.set()  # the writer does its last flush and returns; it is never cancelled mid-batch
        if self._writer_error is not None:
            raise self._writer_error

    async def _write_periodically(self, finished: anyio.Event) -> None:
        while True:
            with anyio.move_on_after(FLUSH_EVERY_S):
                await finished.wait()
            done = finished.is_set()
            batch = self.recorder.take_batch()
            try:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(self._write_batch, batch)
            except Exception as exc:  # a failing disk: stop the run, keep the error for the caller
                self._writer_error = exc
                self.stop.set(str(exc) if isinstance(exc, DiskFull) else f"writing results failed: {exc}")
                return
            if done:
                return

    def _write_batch(self, batch: LiveBatch) -> None:
        """Write a batch of results, then drop the ledger entries of the paid calls it holds."""
        self.recorder.write(batch)
        self.calls.forget_recorded(batch.calls)

    def _close_limiters(self) -> None:
        for limiter in self.players.limiters.limiters().values():
            limiter.close()

    async def _play_in_slot(self, plan: GamePlan, lease: Lease) -> None:
        LEND_SLOT.set(lease.lent)  # this task's own context (its seats' tasks copy it): only this game's retries
        try:
            await self.play(plan)
        finally:
            lease.end()

    def _player(self, plan: GamePlan, seat: str) -> Strategy | LLMAgent:
        cond = plan.condition
        who = cond.player_a if seat == "a" else cond.player_b
        rng = stream(plan.seed, seat)
        if isinstance(who, StrategyPlan):
            return who.spec.build(cond.game, rng)
        sample = Sample(condition=cond.name, replicate=plan.replicate, seat=seat)
        return LLMAgent(
            self.players.get(who),
            self.calls,
            seat=seat,
            game_id=plan.game_id,
            game_seed=plan.seed,
            sample=sample,
            rng=rng,
            sample_seed=sample_seed(self.run_seed, sample),
            on_question=partial(self.progress.question_answered, plan.game_id),
        )

    async def play(self, plan: GamePlan) -> None:
        cond = plan.condition
        horizon = cond.horizon
        length = horizon.game_length(plan.seed)
        match = Match(
            cond.game,
            cond.noise,
            stream(plan.seed, "noise"),
            observation=cond.observation_noise,
            observation_rng=stream(plan.seed, "observation") if cond.observation_noise > 0 else None,
        )
        a, b = self._player(plan, "a"), self._player(plan, "b")
        models = [p for p in (a, b) if isinstance(p, LLMAgent)]
        self.recorder.game_started(plan, length)

        def on_round(m: Match) -> None:
            calls = [c for agent in models for c in agent.take_records()]
            answers = [x for agent in models for x in agent.take_answers()]
            self.recorder.round_played(plan.game_id, m, calls, answers)
            self.progress.round_played(cond, plan.game_id, m.rounds_played)

        def record_leftovers(records: list[CallRecord] | None = None) -> None:
            """Calls (and comprehension answers) of a round that was never completed were still made."""
            calls = (records or []) + [c for agent in models for c in agent.take_records()]
            answers = [x for agent in models for x in agent.take_answers()]
            if calls or answers:
                self.recorder.calls_without_round(calls, answers)

        status: GameStatus = GameStatus.COMPLETE
        error: str | None = None
        failure: FailureKind | None = None
        try:
            await play_game(
                match, a, b, length, horizon.known_to_players(), on_round=on_round, should_stop=self.stop.is_set
            )
            if match.rounds_played < length:
                status, error = GameStatus.INTERRUPTED, self.stop.reason
        except BudgetExhausted as exc:
            status, error = GameStatus.INTERRUPTED, exc.reason
            self.stop.set(exc.reason)
        except Stopped:
            status, error = GameStatus.INTERRUPTED, self.stop.reason
        except (CallFailed, GameFailed) as exc:
            status, error, failure = GameStatus.FAILED, exc.reason, exc.kind
            self.progress.games_failed += 1
            if exc.kind is FailureKind.AUTHENTICATION:
                # Every other game would fail the same way: stop instead of failing them one by one.
                self.stop.set(
                    f"the provider rejected the API key or access ({exc.reason}); fix the key, then `pdbench resume`"
                )
            if isinstance(exc, GameFailed):
                record_leftovers(exc.records)
        except Exception as exc:  # anything else fails this game only, never the run
            status, error, failure = GameStatus.FAILED, f"{type(exc).__name__}: {exc}", FailureKind.PERMANENT
            self.progress.games_failed += 1
        except anyio.get_cancelled_exc_class():
            # A forced stop: the rounds played so far stay recorded; resume replays the game.
            record_leftovers()
            self.recorder.game_ended(plan.game_id, match, GameStatus.INTERRUPTED, self.stop.reason)
            raise
        finally:
            record_leftovers()
        self.recorder.game_ended(plan.game_id, match, status, error, failure)
        if status is not GameStatus.INTERRUPTED:
            self.progress.game_ended(cond, plan.game_id, match.rounds_played)
            self.progress.games_done += 1
            self.progress.per_condition_done[cond.name] += 1


def _soon(loop: asyncio.AbstractEventLoop, callback: Callable[[], object]) -> None:
    """Run ``callback`` on ``loop`` from any thread; nothing if the loop has closed meanwhile (the run ended)."""
    with suppress(RuntimeError):
        loop.call_soon_threadsafe(callback)


def sample_seed(run_seed: int, sample: Sample) -> int:
    """The sampling seed sent with the requests of one draw (providers that take a seed use it; the mock
    provider draws from it): one per condition, replicate and seat, under the run's seed."""
    return derive_seed(run_seed, "sample", sample.condition, sample.replicate, sample.seat) % 2**31
