"""The live progress of a run stopped part way and resumed never goes down: the resumed session starts from what
the results file holds (the issue saw 127/184 rounds fall to 120/139 after a resume), and the two sessions
together count every move and question of the plan once."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from harness.config.plan import summarize
from harness.config.presets.evaluation import eval_config
from harness.engine.model_games import Monitor
from harness.engine.progress import Progress
from harness.engine.runner import resume_run, run_experiment
from harness.states import RunStatus

Counts = tuple[int, int, int, int, float, float, float]
Display = AbstractContextManager[None]


def counts(p: Progress) -> Counts:
    """What the display shows: games, rounds, moves and questions done; rounds, moves and questions planned."""
    return p.games_done, p.rounds, p.moves, p.questions, p.rounds_planned, p.moves_planned, p.questions_planned


def watch(seen: list[Counts], stop_after_answers: int | None = None) -> Callable[[Monitor], Display]:
    """A live display that notes the counts when it starts, after every round and answer, and when it ends; and
    stops the run (as Ctrl-C does) once ``stop_after_answers`` questions were answered, in the middle of a round."""

    def factory(m: Monitor) -> Display:
        p = m.progress
        seen.append(counts(p))
        answered, played = p.question_answered, p.round_played

        def on_answer(game_id: int) -> None:
            answered(game_id)
            seen.append(counts(p))
            if stop_after_answers is not None and p.questions >= stop_after_answers and m.stop is not None:
                m.stop.set("stopped by the test")

        def on_round(*args: object) -> None:
            played(*args)  # type: ignore[arg-type]
            seen.append(counts(p))

        p.question_answered, p.round_played = on_answer, on_round  # type: ignore[method-assign]

        @contextmanager
        def shown() -> Iterator[None]:
            yield
            seen.append(counts(p))

        return shown()

    return factory


def test_counts_never_go_down_when_a_stopped_run_is_resumed(tmp_path: Path) -> None:
    # 2 opponents x 2 replicates of 5 rounds, questions before rounds 1 and 3 (5 + 6 a game): 20 rounds and
    # moves, 44 questions. The run is stopped among round 3's questions, its first rounds recorded.
    config = eval_config("mock/tft", opponents=["TFT", "ALLD"], rounds=5, replicates=2, comprehension=[1, 3])
    assert summarize(config).model_calls == 20 + 44
    first: list[Counts] = []
    stopped = run_experiment(config, results_dir=tmp_path, run_id="r", monitor=watch(first, stop_after_answers=23))
    assert stopped.status is RunStatus.INTERRUPTED
    end = first[-1]
    assert end[0] < 4 and end[1] > 0 and 23 <= end[3] < 44, end  # stopped part way, rounds and answers recorded
    second: list[Counts] = []
    resumed = resume_run(tmp_path, "r", monitor=watch(second))
    assert resumed.status is RunStatus.COMPLETE
    start = second[0]
    assert start[:4] == end[:4], (end, start)  # the resume starts from what was recorded
    assert start[4:] == end[4:]  # and its total is the whole run's (fixed games: nothing shrinks)
    for before, after in itertools.pairwise(second):
        assert all(b <= a for b, a in zip(before[:4], after[:4], strict=True)), (before, after)
    assert second[-1] == (4, 20, 20, 44, 20.0, 20.0, 44.0)  # every move and question counted once
