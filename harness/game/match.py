"""One game between two players, round by round.

The rules of a round (noise, payoffs, bookkeeping) live in :class:`Match`, in its two ways of being fed
moves: :meth:`Match.play` for two synchronous policies (classic strategies), one plain loop, noisy or not,
with no event loop and no per-round allocation beyond the histories; and :meth:`Match.record`, one round
at a time, which :func:`play_game` calls for any pair that includes an awaited
:class:`~harness.game.view.Agent` (a model), asking both players at the same time when both must be awaited.
Both give the same game for the same moves and noise stream (``tests/unit/test_match.py``).

Two kinds of noise. *Execution* noise (``noise``) flips a move as it is played: both players and the payoffs
see the flipped move. *Observation* noise (``observation``) flips what one player sees of the other's move, its
own draw each round (A's first, then B's, from ``observation_rng``, a stream of its own so that a game without
it draws exactly what it drew before observation noise existed): the payoffs use the moves as played, each
player's history shows the opponent's moves as that player observed them (``observed_a``: B's moves as A saw
them; ``observed_b``: A's as B saw them; both empty, meaning "as played", when ``observation`` is 0).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import compress, count
from typing import cast

import anyio

from harness.game.horizon import HorizonInfo
from harness.game.rules import FLIP, Action, PayoffMatrix
from harness.game.view import Agent, Decision, Policy, RoundView

# A round's noise, as one int: which moves noise flipped (0: neither); _noise sets them as 1 << seat (a: 0, b: 1).
_FLIP_A = 1
_FLIP_B = 2

# Each move as a bit of a round's cell (its pair of moves as one byte, 2 * A's bit + B's): C is 0, D is 1.
_BIT_A = bytes.maketrans(b"CD", b"\x00\x02")
_BIT_B = bytes.maketrans(b"CD", b"\x00\x01")
_CELLS = ("C", "C"), ("C", "D"), ("D", "C"), ("D", "D")  # the pair of moves of cells 0 to 3

PayoffTable = dict[tuple[str, str], tuple[float, float]]


@functools.lru_cache(maxsize=64)
def _lookups(game: PayoffMatrix) -> tuple[PayoffTable, list[float], list[float]]:
    """The payoff lookups of a game, built once per game rather than once per match (a tournament plays
    thousands of short matches of one game): both payoffs by the pair of moves (:meth:`Match.record`), and
    each player's payoff by cell (:meth:`Match.play`). Shared between matches, so never written."""
    table = game.table()
    return table, [table[cell][0] for cell in _CELLS], [table[cell][1] for cell in _CELLS]


def _cells(moves_a: list[Action], moves_b: list[Action]) -> bytes:
    """Each round's cell (its pair of moves, 0 to 3, see ``_CELLS``), computed in C a whole game at a time:
    each history becomes a string of 0/2 (A) or 0/1 (B) bytes, read as one big integer, and the sum of the
    two integers has each round's cell in its byte (no byte carries: 2 + 1 < 256)."""
    bits_a = "".join(moves_a).encode().translate(_BIT_A)
    bits_b = "".join(moves_b).encode().translate(_BIT_B)
    if (
        len(bits_a) != len(moves_a)
        or len(bits_b) != len(moves_b)
        or bits_a.strip(b"\x00\x02")
        or bits_b.strip(b"\x00\x01")
    ):
        raise ValueError(f"a move must be C or D, not {sorted({*moves_a, *moves_b} - set(FLIP))[:3]}")
    return (int.from_bytes(bits_a, "big") + int.from_bytes(bits_b, "big")).to_bytes(len(moves_a), "big")


@dataclass(slots=True)
class Match:
    """The state of one game: both players' moves as intended and as played, and payoffs."""

    game: PayoffMatrix
    noise: float
    noise_rng: random.Random
    moves_a: list[Action] = field(default_factory=list)
    moves_b: list[Action] = field(default_factory=list)
    intended_a: list[Action] = field(default_factory=list)
    intended_b: list[Action] = field(default_factory=list)
    payoffs_a: list[float] = field(default_factory=list)
    payoffs_b: list[float] = field(default_factory=list)
    flagged_a: list[int] = field(default_factory=list)  # rounds (1-based) whose move was not really chosen
    flagged_b: list[int] = field(default_factory=list)
    score_a: float = 0.0
    score_b: float = 0.0
    observation: float = 0.0  # probability that a player sees the opponent's move flipped
    observation_rng: random.Random | None = None  # its draws; None without observation noise
    observed_a: list[Action] = field(default_factory=list)  # B's moves as A saw them (empty: q = 0, as played)
    observed_b: list[Action] = field(default_factory=list)  # A's moves as B saw them

    @property
    def rounds_played(self) -> int:
        return len(self.moves_a)

    def record(self, intended_a: Action, intended_b: Action, flagged_a: bool = False, flagged_b: bool = False) -> None:
        """Play one round: apply noise (A's draw first, then B's), score it, append it."""
        self.intended_a.append(intended_a)
        self.intended_b.append(intended_b)
        if self.noise > 0.0:
            rng = self.noise_rng.random
            played_a = FLIP[intended_a] if rng() < self.noise else intended_a
            played_b = FLIP[intended_b] if rng() < self.noise else intended_b
        else:
            played_a, played_b = intended_a, intended_b
        pay_a, pay_b = self._table[(played_a, played_b)]
        self.moves_a.append(played_a)
        self.moves_b.append(played_b)
        self.payoffs_a.append(pay_a)
        self.payoffs_b.append(pay_b)
        if self.observation > 0.0:
            self._observe(played_a, played_b)
        if flagged_a:
            self.flagged_a.append(len(self.moves_a))
        if flagged_b:
            self.flagged_b.append(len(self.moves_b))
        self.score_a += pay_a
        self.score_b += pay_b

    def _observe(self, played_a: Action, played_b: Action) -> None:
        """Each player's observation of the other's move of one round: A's draw first, then B's."""
        draw, q = self._observation_draw(), self.observation
        self.observed_a.append(FLIP[played_b] if draw() < q else played_b)
        self.observed_b.append(FLIP[played_a] if draw() < q else played_a)

    def _observation_draw(self) -> Callable[[], float]:
        if self.observation_rng is None:
            raise ValueError("a match with observation noise needs its observation stream (observation_rng)")
        return self.observation_rng.random

    def seen(self, seat: str) -> list[Action]:
        """The opponent's moves as the player in ``seat`` saw them: what its strategy reads and its prompt shows
        (the played moves themselves without observation noise)."""
        if self.observation > 0.0:
            return self.observed_a if seat == "a" else self.observed_b
        return self.moves_b if seat == "a" else self.moves_a

    def play(self, a: Policy, b: Policy, rounds: int) -> None:
        """Play ``rounds`` rounds between two synchronous policies: the same rounds as ``rounds`` calls of
        :meth:`record` with the policies' moves, and the same noise draws (A's first, then B's, in each round).

        Only what a policy reads is done round by round: its move, the noise on it and the played histories.
        The noise draws of every round are taken before the first move (the noise stream is the match's own:
        no policy draws from it), and the rest of the bookkeeping (intended moves, payoffs, scores) is done
        at the end, a whole game at a time: no policy reads it.
        """
        if self.observation > 0.0:
            self._play_observed(a, b, rounds)
            return
        move_a, move_b = a.move, b.move
        moves_a, moves_b = self.moves_a, self.moves_b
        append_a, append_b = moves_a.append, moves_b.append
        start = len(moves_a)
        flips = self._noise(rounds)
        for flip in flips:
            x = move_a(moves_a, moves_b)
            y = move_b(moves_b, moves_a)
            if flip:
                if flip & _FLIP_A:
                    x = FLIP[x]
                if flip & _FLIP_B:
                    y = FLIP[y]
            append_a(x)
            append_b(y)
        self._settle(start, flips)

    def _play_observed(self, a: Policy, b: Policy, rounds: int) -> None:
        """:meth:`play` under observation noise: each policy reads its own moves and the opponent's as it saw
        them. The same draws as :meth:`record`: the execution noise of every round first (its own stream), and
        the observation draws of every round (A's, then B's, each round) from the observation stream."""
        move_a, move_b = a.move, b.move
        moves_a, moves_b, seen_a, seen_b = self.moves_a, self.moves_b, self.observed_a, self.observed_b
        start = len(moves_a)
        flips = self._noise(rounds)
        draw, q = self._observation_draw(), self.observation
        misses = [i for i in range(2 * rounds) if draw() < q]  # draw i: round i // 2's, A's when i is even
        missed = [0] * rounds
        for i in misses:
            missed[i >> 1] |= 1 << (i & 1)
        for flip, miss in zip(flips, missed, strict=True):
            x = move_a(moves_a, seen_a)
            y = move_b(moves_b, seen_b)
            if flip & _FLIP_A:
                x = FLIP[x]
            if flip & _FLIP_B:
                y = FLIP[y]
            moves_a.append(x)
            moves_b.append(y)
            seen_a.append(FLIP[y] if miss & _FLIP_A else y)
            seen_b.append(FLIP[x] if miss & _FLIP_B else x)
        self._settle(start, flips)

    def _noise(self, rounds: int) -> list[int]:
        """The noise of each of the next ``rounds`` rounds (``_FLIP_A | _FLIP_B`` bits; all 0 without noise):
        two draws a round, A's first, each flipping its move when below the noise, as in :meth:`record`. Draw
        ``i`` is round ``i // 2``'s, A's when ``i`` is even: it sets bit ``1 << (i % 2)``."""
        flips = [0] * rounds
        if self.noise > 0.0:
            draw, noise = self.noise_rng.random, self.noise
            for i in [i for i in range(2 * rounds) if draw() < noise]:
                flips[i >> 1] |= 1 << (i & 1)
        return flips

    def _settle(self, start: int, flips: list[int]) -> None:
        """The bookkeeping of the rounds from ``start`` on, once their played moves are known: the intended
        moves are the played ones with the flipped ones flipped back; payoffs are read by cell."""
        played_a, played_b = self.moves_a[start:], self.moves_b[start:]
        self.intended_a.extend(played_a)
        self.intended_b.extend(played_b)
        for r in compress(count(), flips):
            if flips[r] & _FLIP_A:
                self.intended_a[start + r] = FLIP[played_a[r]]
            if flips[r] & _FLIP_B:
                self.intended_b[start + r] = FLIP[played_b[r]]
        cells = _cells(played_a, played_b)
        pay_a, pay_b = self._pay_a, self._pay_b
        new_a = list(map(pay_a.__getitem__, cells))
        new_b = list(map(pay_b.__getitem__, cells))
        self.payoffs_a.extend(new_a)
        self.payoffs_b.extend(new_b)
        # sum() from the score adds the payoffs in round order, as record() does (Python 3.11; from 3.12 on
        # sum() compensates rounding, which only shows for payoffs that are not exact binary fractions)
        self.score_a = sum(new_a, self.score_a)
        self.score_b = sum(new_b, self.score_b)

    def first(self, rounds: int) -> Match:
        """A new match holding this one's first ``rounds`` rounds, as if the game had stopped there (the
        same noise stream, not rewound): the lists are copies, the scores the sums of their payoffs."""
        payoffs_a, payoffs_b = self.payoffs_a[:rounds], self.payoffs_b[:rounds]
        return Match(
            self.game,
            self.noise,
            self.noise_rng,
            moves_a=self.moves_a[:rounds],
            moves_b=self.moves_b[:rounds],
            intended_a=self.intended_a[:rounds],
            intended_b=self.intended_b[:rounds],
            payoffs_a=payoffs_a,
            payoffs_b=payoffs_b,
            flagged_a=[r for r in self.flagged_a if r <= rounds],
            flagged_b=[r for r in self.flagged_b if r <= rounds],
            score_a=sum(payoffs_a, 0.0),
            score_b=sum(payoffs_b, 0.0),
            observation=self.observation,
            observation_rng=self.observation_rng,
            observed_a=self.observed_a[:rounds],
            observed_b=self.observed_b[:rounds],
        )

    def __post_init__(self) -> None:
        self._table, self._pay_a, self._pay_b = _lookups(self.game)

    _table: PayoffTable = field(init=False, repr=False)
    _pay_a: list[float] = field(init=False, repr=False)  # A's payoff by cell (see _cells)
    _pay_b: list[float] = field(init=False, repr=False)

    def view(self, seat: str, horizon: HorizonInfo) -> RoundView:
        """What the player in ``seat`` may know before the next round. Under observation noise, everything it is
        shown follows from what it observed: the opponent's moves as it saw them, and the payoffs and scores of
        its own moves against those (the payoffs actually paid would give a misperception away)."""
        if seat == "a":
            own, opp, own_p, opp_p = self.moves_a, self.moves_b, self.payoffs_a, self.payoffs_b
            own_s, opp_s = self.score_a, self.score_b
        else:
            own, opp, own_p, opp_p = self.moves_b, self.moves_a, self.payoffs_b, self.payoffs_a
            own_s, opp_s = self.score_b, self.score_a
        if self.observation > 0.0:
            opp = self.seen(seat)
            cells = zip(own, opp, strict=True) if seat == "a" else zip(opp, own, strict=True)
            pays = [self._table[cell] for cell in cells]  # (A's payoff, B's) of each round as this seat saw it
            mine, theirs = (0, 1) if seat == "a" else (1, 0)
            own_p, opp_p = [p[mine] for p in pays], [p[theirs] for p in pays]
            own_s, opp_s = sum(own_p, 0.0), sum(opp_p, 0.0)
        return RoundView(
            seat="a" if seat == "a" else "b",
            round=self.rounds_played + 1,
            horizon=horizon,
            payoffs=self.game,
            own_moves=tuple(own),
            opponent_moves=tuple(opp),
            own_payoffs=tuple(own_p),
            opponent_payoffs=tuple(opp_p),
            own_score=own_s,
            opponent_score=opp_s,
        )


Player = Policy | Agent


async def _decide(player: Player, awaited: bool, match: Match, seat: str, horizon: HorizonInfo) -> Decision:
    """One seat's move. ``awaited``: whether ``player`` is an :class:`Agent`, told once per game by
    :func:`play_game` (a check against a runtime Protocol costs more than a strategy's whole move)."""
    if awaited:
        return await cast(Agent, player).act(match.view(seat, horizon))
    own = match.moves_a if seat == "a" else match.moves_b
    return Decision(cast(Policy, player).move(own, match.seen(seat)))


async def _decide_both(a: Player, b: Player, match: Match, horizon: HorizonInfo) -> tuple[Decision, Decision]:
    """Ask both players at once (two model calls in flight, not one after the other).

    If one fails, the other is still allowed to finish (its call may be paid for and must be
    recorded), and the first failure is raised as itself, not wrapped in an exception group.
    """
    results: dict[str, Decision] = {}
    errors: list[Exception] = []

    async def ask(seat: str, player: Player) -> None:
        try:
            results[seat] = await _decide(player, True, match, seat, horizon)
        except Exception as exc:
            errors.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask, "a", a)
        tg.start_soon(ask, "b", b)
    if errors:
        raise errors[0]
    return results["a"], results["b"]


async def play_game(
    match: Match,
    a: Player,
    b: Player,
    rounds: int,
    horizon: HorizonInfo,
    on_round: Callable[[Match], object] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Match:
    """Play ``rounds`` rounds where at least one player is awaited.

    When both players are agents their moves are requested concurrently; a strategy
    answers inline. ``on_round`` (if given) sees the match after each round, e.g. to
    record it. Cancellation between rounds leaves ``match`` holding every finished round.
    """
    awaited_a, awaited_b = isinstance(a, Agent), isinstance(b, Agent)
    for _ in range(rounds - match.rounds_played):
        if should_stop is not None and should_stop():
            break
        if awaited_a and awaited_b:
            dec_a, dec_b = await _decide_both(a, b, match, horizon)
        else:
            dec_a = await _decide(a, awaited_a, match, "a", horizon)
            dec_b = await _decide(b, awaited_b, match, "b", horizon)
        match.record(dec_a.action, dec_b.action, dec_a.flagged, dec_b.flagged)
        if on_round is not None:
            on_round(match)
    return match
