"""Counterfactual probes of a recorded run (``pdbench probe``): would the model have moved otherwise, had the
opponent's last move been the other one?

For a complete game of the source run, a round t >= 2 and a seat a model played, the model's request for round t
is rebuilt exactly as the engine sent it: the same player (prompt templates, persona, sampling settings), the same
option order (drawn from the game's seed), the same sample identity (condition, replicate, seat) and sampling seed
(from the run's seed), and the history of rounds 1..t-1 as played. That is the *factual* request: its cache key is
the recorded request's, so the response cache (or, when the cache lost it, the source run's own ``calls``, as a
resume would) answers it, and it is never sent: its call path has a budget of $0, so a request that the rebuild got
wrong fails instead of being paid for, and the probe is counted as *unmatched* and dropped. The factual answer must
also read as the move the source recorded for round t, or the probe is unmatched too. A mock model (offline, free)
computes its factual answer again rather than looking it up, since its answers are never cached.

The *counterfactual* request is the same with the opponent's move at t - 1 flipped in the history shown (its payoff
and both totals follow from the flipped move): another request of the same draw, sent through the normal call path
(cache, retries, rate limits, the ledger, ``--max-cost``), so it is paid once and answered from the cache after.

Comprehension questions are not asked again (they never change the move's conversation). A round whose recorded move
was a fallback (every answer unreadable) is not probed: its move was not the model's. The probe run holds the calls
of both requests (``purpose`` ``factual`` and ``counterfactual``, under the source game, round and seat); the
``counterfactual_probes`` view pairs them and :mod:`harness.analysis.probes` reports the shares.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio

from harness.analysis.probes import (
    COUNTERFACTUAL,
    FACTUAL,
    PROBE_KIND,
    Flip,
    RecordedGame,
    mean_move_cost,
    recorded_games,
    recorded_move_answers,
)
from harness.calls.cache.cache import ResponseCache
from harness.calls.limits import LimiterRegistry
from harness.calls.path import BudgetExhausted, CallFailed, CallPath, Stopped
from harness.calls.pricing import PriceTable
from harness.calls.record import Answer, CallRecord
from harness.config import ExperimentConfig, parse_experiment
from harness.config.engine_options import EngineOptions
from harness.config.loading import as_played
from harness.config.plan import GamePlan, ModelPlan, iter_games
from harness.engine.interrupts import StopFlag, graceful_interrupt
from harness.engine.scheduler import ModelPlayers, games_in_flight, sample_seed
from harness.errors import ConfigError
from harness.game.match import Match
from harness.game.rules import FLIP
from harness.game.seeds import stream
from harness.game.view import RoundView
from harness.players.model.player import GameFailed, LLMAgent
from harness.providers.base import Sample
from harness.states import RunStatus
from harness.store.catalog import Catalog, open_run
from harness.store.live import LiveRecorder
from harness.store.writer import RunWriter
from harness.util.plural import plural

WRITE_EVERY = 64
"""Probes buffered between two writes of the probe run."""


@dataclass(frozen=True, slots=True)
class ProbeSite:
    """One probe: round ``round`` of source game ``game_id``, asked of the model in ``seat``."""

    game_id: int
    round: int
    seat: str
    flip: Flip
    factual: str  # the move the source recorded for the round (intended, before noise)


@dataclass(frozen=True, slots=True)
class ProbePlan:
    """Everything a probe run needs, read and checked before it starts."""

    source_run: str
    config: ExperimentConfig
    sites: list[ProbeSite]
    games: dict[int, GamePlan]
    histories: dict[int, RecordedGame]
    recorded: dict[tuple[str, str, str], Answer]
    rounds: list[int] | None  # None: every round from 2
    max_probes: int | None
    cost_per_request: float | None  # the source's mean paid move call: the estimate of one counterfactual request

    @property
    def paid_models(self) -> bool:
        """Whether any probed seat is a model whose answers are paid for (not a mock)."""
        return any(not _offline_name(self.games[s.game_id], s.seat) for s in self.sites)

    @property
    def estimated_cost(self) -> float | None:
        """Dollars the counterfactual requests are expected to cost at most (every one a cache miss)."""
        if not self.paid_models:
            return 0.0
        return None if self.cost_per_request is None else self.cost_per_request * len(self.sites)


def _offline_name(plan: GamePlan, seat: str) -> bool:
    from harness.providers.registry import is_offline

    who = plan.condition.player_a if seat == "a" else plan.condition.player_b
    return isinstance(who, ModelPlan) and is_offline(who.config.model.strip())


@dataclass(frozen=True, slots=True)
class ProbeResult:
    run_id: str
    path: Path
    status: RunStatus
    probes: int  # probes recorded (both requests answered and the factual one matched)
    unmatched: int  # factual requests the cache and the source did not answer, or answered with another move
    paid_calls: int  # counterfactual attempts sent to a provider (cache hits excluded)
    factual_paid: int  # factual attempts sent to a provider: always 0 (their path has no budget)
    cost_usd: float
    seconds: float
    reason: str | None = None


def parse_rounds(text: str) -> list[int] | None:
    """``--rounds``: ``all`` (None) or round numbers ``t1,t2,...``, each at least 2 (round 1 has no last move)."""
    if text.strip().lower() == "all":
        return None
    rounds: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 2:
            raise ConfigError(
                f"--rounds {text!r}: each round must be a whole number of at least 2 (round 1 follows no move of "
                "the opponent to flip), as in --rounds 2,5,10, or all"
            )
        rounds.add(int(part))
    return sorted(rounds)


def _source_config(catalog: Catalog, run_id: str) -> ExperimentConfig:
    run = catalog.require_run(run_id)
    if run["kind"] == PROBE_KIND:
        raise ConfigError(f"run {run_id} is itself a probe run; probe the run it probed, {_source_of(run)}")
    try:
        stored = json.loads(str(run["config_json"]))
        return parse_experiment(
            as_played(stored),
            source=f"the stored config of run {run_id}",
            fix_hint="restore the files it names (personas, templates), then probe it",
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"run {run_id} ({run['kind']}) has no experiment to replay ({exc}); probe a run of games with a model "
            "player, made by `pdbench eval` or `pdbench run`"
        ) from None


def _source_of(run: dict[str, object]) -> str:
    with contextlib.suppress(TypeError, ValueError, AttributeError):
        return str(json.loads(str(run["config_json"]))["probe"]["source_run"])
    return "(unknown)"


def plan_probes(
    results_dir: Path, source_run: str, rounds: list[int] | None = None, max_probes: int | None = None
) -> ProbePlan:
    """The probes of ``source_run``: every model seat of every complete game, at each round of ``rounds`` the game
    reached (every round from 2 when None), its recorded move the model's own; ordered by round, then game and seat,
    so that ``max_probes`` keeps the earliest rounds of every game rather than every round of the first games.
    Raises :class:`ConfigError` (before anything is sent) for a run with no model player, a round no game reached,
    or a run with nothing to probe."""
    if max_probes is not None and max_probes < 1:
        raise ConfigError(f"--max-probes {max_probes}: give at least 1 (or leave it out for every probe)")
    with open_run(results_dir, source_run) as catalog:
        config = _source_config(catalog, source_run)
        histories = {g.game_id: g for g in recorded_games(catalog, source_run)}
        answers = recorded_move_answers(catalog, source_run)
        cost = mean_move_cost(catalog, source_run)
    games = _game_plans(config, set(histories))
    seats = {gid: [s for s in ("a", "b") if isinstance(_who(plan, s), ModelPlan)] for gid, plan in games.items()}
    if not any(seats.values()):
        raise ConfigError(
            f"run {source_run} has no model player: a probe asks a language model again, and its games are between "
            "classic strategies (their moves follow from the history by rule). Probe a run made by `pdbench eval` "
            "or `pdbench run` with a model player"
        )
    longest = max((h.rounds for gid, h in histories.items() if seats.get(gid)), default=0)
    if longest < 2:
        raise ConfigError(
            f"run {source_run} has no complete game of a model with two rounds or more: a probe flips the "
            "opponent's move in round t - 1 and asks again for round t >= 2"
        )
    beyond = [t for t in rounds or () if t > longest]
    if beyond:
        raise ConfigError(
            f"--rounds {','.join(map(str, beyond))}: beyond every game of run {source_run}, whose longest complete "
            f"game of a model has {plural(longest, 'round')}; give rounds from 2 to {longest}, or --rounds all"
        )
    sites = [
        ProbeSite(gid, t, seat, Flip.of(history.seen(seat)[t - 2]), history.intended(seat)[t - 1])
        for t in (rounds or range(2, longest + 1))
        for gid, history in sorted(histories.items())
        if t <= history.rounds
        for seat in seats.get(gid, [])
        if t not in history.flagged(seat)
    ]
    if max_probes is not None:
        sites = sites[:max_probes]
    recorded = {(p, m, r): Answer(text, refusal) for p, m, r, text, refusal in answers}
    return ProbePlan(source_run, config, sites, games, histories, recorded, rounds, max_probes, cost)


def _who(plan: GamePlan, seat: str) -> object:
    return plan.condition.player_a if seat == "a" else plan.condition.player_b


def _game_plans(config: ExperimentConfig, wanted: set[int]) -> dict[int, GamePlan]:
    """The plans of the games ``wanted``, as the engine made them (seeds derived, never positional)."""
    found: dict[int, GamePlan] = {}
    for plan in iter_games(config):
        if plan.game_id in wanted:
            found[plan.game_id] = plan
            if len(found) == len(wanted):
                break
    return found


def history_view(plan: GamePlan, history: RecordedGame, site: ProbeSite, *, flipped: bool) -> RoundView:
    """What the model in ``site.seat`` saw before round ``site.round``: rounds 1..t-1, its own moves as played and
    the opponent's as it saw them (under observation noise, its prompt showed those, with the payoffs and totals
    they imply), the opponent's move at t - 1 flipped when ``flipped`` (its payoffs and the totals recomputed)."""
    cond = plan.condition
    match = Match(cond.game, 0.0, random.Random(0))  # no noise: the moves recorded are the moves shown
    t = site.round
    own, seen = history.played(site.seat), history.seen(site.seat)
    for r in range(t - 1):
        opponent = FLIP[seen[r]] if flipped and r == t - 2 else seen[r]
        a, b = (own[r], opponent) if site.seat == "a" else (opponent, own[r])
        match.record(a, b)  # type: ignore[arg-type]
    return match.view(site.seat, cond.horizon.known_to_players())


@dataclass
class _Probing:
    """What the probes of one run share while they play."""

    plan: ProbePlan
    players: ModelPlayers
    factual_free: CallPath  # mock models: computed again, free
    factual_known: CallPath  # every other model: answered from the cache or the source run, never sent
    paid: CallPath  # counterfactual requests
    recorder: LiveRecorder
    probes: int = 0
    unmatched: int = 0
    unwritten: int = 0
    paid_records: list[CallRecord] = dataclasses.field(default_factory=list)

    def agent(self, site: ProbeSite, calls: CallPath) -> LLMAgent:
        """The model of ``site`` as the engine made it for that game and seat (see Scheduler._player)."""
        game = self.plan.games[site.game_id]
        who = _who(game, site.seat)
        assert isinstance(who, ModelPlan)
        cond = game.condition
        sample = Sample(condition=cond.name, replicate=game.replicate, seat=site.seat)
        player = dataclasses.replace(self.players.get(who), comprehension=None)
        return LLMAgent(
            player,
            calls,
            seat=site.seat,
            game_id=game.game_id,
            game_seed=game.seed,
            sample=sample,
            rng=stream(game.seed, site.seat),
            sample_seed=sample_seed(self.plan.config.run.seed, sample),
        )

    async def probe(self, site: ProbeSite) -> None:
        game, history = self.plan.games[site.game_id], self.plan.histories[site.game_id]
        factual_path = self.factual_free if _offline_name(game, site.seat) else self.factual_known
        factual = self.agent(site, factual_path)
        try:
            decision = await factual.act(history_view(game, history, site, flipped=False))
        except (BudgetExhausted, CallFailed, GameFailed):
            self.unmatched += 1  # not in the cache nor the source: the rebuild differs from what was sent
            return
        if decision.flagged or decision.action != site.factual:
            self.unmatched += 1
            return
        counter = self.agent(site, self.paid)
        try:
            await counter.act(history_view(game, history, site, flipped=True))
        except GameFailed as exc:
            counter.records.extend(exc.records)
        except (BudgetExhausted, Stopped):
            self._keep(factual.take_records(), [], counter.take_records())
            raise
        except CallFailed as exc:
            counter.records.extend(exc.records)
        self._keep(factual.take_records(), counter.take_records(), [])
        self.probes += 1

    def _keep(self, factual: list[CallRecord], counter: list[CallRecord], unanswered: list[CallRecord]) -> None:
        """Buffer a probe's calls, the move calls relabelled by purpose; an unanswered counterfactual's attempts
        (a stop, the budget) are kept as ``counterfactual`` calls too, without the factual ones that pair them."""
        rows = [*counter, *unanswered]
        self.paid_records.extend(rows)
        if counter:
            self.recorder.calls_without_round([_as(r, FACTUAL) for r in factual])
        self.recorder.calls_without_round([_as(r, COUNTERFACTUAL) for r in rows])
        self.unwritten += 1
        if self.unwritten >= WRITE_EVERY:
            self.flush()

    def flush(self) -> None:
        self.recorder.flush()
        self.paid.forget_recorded(self.paid_records)
        self.paid_records, self.unwritten = [], 0


def _as(record: CallRecord, purpose: str) -> CallRecord:
    """A move call of a probe, as the probe run records it (judge calls keep their purpose)."""
    return dataclasses.replace(record, purpose=purpose) if record.purpose == "move" else record


@contextlib.contextmanager
def _cache(engine: EngineOptions, needed: bool) -> Iterator[ResponseCache | None]:
    cache = ResponseCache.open_or_renew(engine.cache_path) if engine.cache_path is not None and needed else None
    try:
        yield cache
    finally:
        if cache is not None:
            cache.close()


def run_probes(
    plan: ProbePlan,
    *,
    results_dir: Path,
    run_id: str,
    engine: EngineOptions | None = None,
    stop: StopFlag | None = None,
) -> ProbeResult:
    """Play the probes of ``plan`` into a new probe run ``run_id`` (linked to its source by
    ``config_json -> probe.source_run``) and mark how it ended: ``interrupted`` when stopped or out of budget."""
    from harness.engine.preflight import check_models

    check_models(plan.config)  # keys and names, before anything is written or sent
    engine = engine or EngineOptions()
    stop = stop if stop is not None else StopFlag()
    started = time.perf_counter()
    config = {
        "probe": {
            "source_run": plan.source_run,
            "rounds": plan.rounds if plan.rounds is not None else "all",
            "max_probes": plan.max_probes,
            "probes_planned": len(plan.sites),
        }
    }
    collapse = plan.config.metrics.collapse
    writer = RunWriter.create(results_dir, run_id)
    try:
        writer.start_run(
            kind=PROBE_KIND,
            config=config,
            seed=plan.config.run.seed,
            games_planned=0,
            collapse_k=collapse.k,
            collapse_threshold=collapse.cooperation_threshold,
        )
    except BaseException:
        writer.close()
        raise
    prices = PriceTable.load(*engine.prices)
    limiters = LimiterRegistry()
    players = ModelPlayers(limiters, http_client=engine.http_client)
    status: RunStatus = RunStatus.FAILED
    reason: str | None = "the probes did not finish"
    ledger_run = f"{writer.path.resolve()}#{writer.run_id}#{writer.created_at()}"
    with graceful_interrupt(stop), _cache(engine, plan.paid_models) as cache:
        probing = _Probing(
            plan=plan,
            players=players,
            factual_free=CallPath(cache=None, prices=prices),
            factual_known=CallPath(cache=cache, prices=prices, max_cost=0.0, recorded=plan.recorded),
            paid=CallPath(
                cache=cache,
                prices=prices,
                retry=engine.retry,
                max_cost=engine.max_cost,
                should_stop=stop.is_set,
                ledger_run=ledger_run if cache is not None else None,
            ),
            recorder=LiveRecorder(writer),
        )
        try:
            anyio.run(_play_all, probing, limiters, engine.workers, stop)
            probing.flush()
            if cache is not None:
                cache.forget_ledger(ledger_run)
            reason = stop.reason if stop else None
            status = RunStatus.INTERRUPTED if stop else RunStatus.COMPLETE
        finally:
            status, reason = writer.finish(status, reason)
            writer.close()
    paid, factual = probing.paid.stats, probing.factual_known.stats
    return ProbeResult(
        run_id=run_id,
        path=writer.path,
        status=status,
        probes=probing.probes,
        unmatched=probing.unmatched,
        paid_calls=paid.calls - paid.cached,
        factual_paid=factual.calls - factual.cached,
        cost_usd=paid.cost_usd,
        seconds=time.perf_counter() - started,
        reason=reason,
    )


async def _play_all(probing: _Probing, limiters: LimiterRegistry, workers: int, stop: StopFlag) -> None:
    """Every probe, as many at once as the endpoints serve; a stop or the budget ends them (calls in flight finish)."""
    for site in probing.plan.sites:
        probing.players.get(_who(probing.plan.games[site.game_id], site.seat))  # type: ignore[arg-type]
    slots = anyio.CapacityLimiter(games_in_flight(limiters, workers))

    async def one(site: ProbeSite) -> None:
        async with slots:
            if stop:
                return
            try:
                await probing.probe(site)
            except BudgetExhausted as exc:
                stop.set(exc.reason)
            except Stopped:
                pass

    try:
        async with anyio.create_task_group() as tg:
            for site in probing.plan.sites:
                tg.start_soon(one, site)
    finally:
        await probing.players.aclose()
