"""How far a run with model players is: what the scheduler has played and still expects to play.

The scheduler updates it, the live display (:mod:`harness.cli.progress`) polls it. Games take minutes, so it
counts rounds and model calls too, which move from the first second: a move per model seat a round, and every
comprehension question (one call each), so a run that asks its questions first does not sit at 0%. Re-asks and
retries are left out (they depend on the answers; the display counts them among its calls).

What is planned is the work this run still expects (:class:`~harness.config.plan.Work`): a game not started
counts its expected length; a game in flight the rounds it has played and those it is still expected to play
(a geometric game's expected rest, w / (1 - w) rounds whatever it has played, so the last game shows progress
rather than sitting at 100%); an ended game what it played. A resumed run starts from what its results file
holds: the games it keeps, and the rounds recorded in the games it plays again (which replay from those
recorded answers, so they are counted once, before the resume); so its counts and its total never go down.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from harness.config.plan import ConditionPlan, Work


@dataclass
class Progress:
    """What the live display shows. ``rounds``, ``moves`` and ``questions`` are done; ``*_planned`` the run's
    whole expected work, done included; ``before`` the calls counted from earlier sessions of a resumed run (not
    in this session's rate); ``credit`` and ``answer_credit`` the rounds and comprehension answers recorded before a
    resume in each game played again (replayed, they are not counted twice)."""

    games_total: int
    per_condition_total: Counter[str] = field(default_factory=Counter)
    per_condition_done: Counter[str] = field(default_factory=Counter)
    games_done: int = 0
    games_failed: int = 0
    rounds: int = 0
    rounds_planned: float = 0.0
    moves: int = 0
    moves_planned: float = 0.0
    questions: int = 0
    questions_planned: float = 0.0
    per_condition_rounds: Counter[str] = field(default_factory=Counter)
    per_condition_rounds_planned: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    before: int = 0
    credit: dict[int, int] = field(default_factory=dict)
    answer_credit: dict[int, int] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    @property
    def calls(self) -> int:
        """Model calls made: moves and questions."""
        return self.moves + self.questions

    @property
    def calls_planned(self) -> float:
        return self.moves_planned + self.questions_planned

    def plan(self, cond: ConditionPlan, games: int) -> None:
        """Count ``games`` games of ``cond`` not started yet."""
        self._plan(cond.name, cond.expected_left().times(games))

    def recorded(self, cond: ConditionPlan, rounds_played: int, games: int) -> None:
        """A resumed run's ``games`` games of ``cond`` that ended before, after ``rounds_played`` rounds each."""
        work = cond.work_through(rounds_played).times(games)
        self._done(cond.name, work)
        self._plan(cond.name, work)
        self.before += round(work.calls)
        self.per_condition_done[cond.name] += games
        self.games_done += games

    def replaying(self, cond: ConditionPlan, game_id: int, rounds: int, answers: int) -> None:
        """A game of ``cond`` (counted by :meth:`plan`) that a resumed run plays again, with ``rounds`` rounds and
        ``answers`` comprehension answers recorded before (a stop may fall between a round's questions and its
        move): they count as done now, and not again when they are replayed, in the same order."""
        if rounds <= 0 and answers <= 0:
            return
        self.credit[game_id] = rounds
        self.answer_credit[game_id] = answers
        done = Work(rounds, rounds * cond.model_seats, answers)
        self._done(cond.name, done)
        self._plan(cond.name, cond.work_through(rounds) + cond.expected_left(rounds) - cond.expected_left(0))
        self.before += round(done.calls)

    def question_answered(self, game_id: int) -> None:
        """A comprehension question of game ``game_id`` was answered (counted at once: a round's questions are
        several calls before its move)."""
        if self.answer_credit.get(game_id, 0) > 0:
            self.answer_credit[game_id] -= 1  # answered before the resume, and counted then
        else:
            self.questions += 1

    def round_played(self, cond: ConditionPlan, game_id: int, round: int) -> None:
        """Round ``round`` of game ``game_id`` was played (its questions were counted as they were answered):
        done, and the game's expected rest after it replaces the one before it (no change in a fixed game; one
        round more in a geometric one, whose rest stays the same)."""
        if round <= self.credit.get(game_id, 0):
            return  # counted before the resume
        work = cond.work_at(round)
        self._done(cond.name, Work(work.rounds, work.moves))
        self._plan(cond.name, work + cond.expected_left(round) - cond.expected_left(round - 1))

    def game_ended(self, cond: ConditionPlan, game_id: int, rounds_played: int) -> None:
        """The game ended (complete or failed) after ``rounds_played`` rounds: nothing more is expected of it."""
        self.credit.pop(game_id, None)
        self.answer_credit.pop(game_id, None)
        self._plan(cond.name, Work() - cond.expected_left(rounds_played))

    def seconds_left(self, now: float | None = None) -> float | None:
        """Time left at this session's rate of model calls (None before its first call or after the last)."""
        elapsed = (time.monotonic() if now is None else now) - self.started
        made = self.calls - self.before
        left = self.calls_planned - self.calls
        if made <= 0 or left <= 0:
            return None
        return elapsed / made * left

    def _done(self, condition: str, work: Work) -> None:
        self.rounds += round(work.rounds)
        self.moves += round(work.moves)
        self.questions += round(work.questions)
        self.per_condition_rounds[condition] += round(work.rounds)

    def _plan(self, condition: str, work: Work) -> None:
        self.rounds_planned += work.rounds
        self.moves_planned += work.moves
        self.questions_planned += work.questions
        self.per_condition_rounds_planned[condition] += work.rounds
