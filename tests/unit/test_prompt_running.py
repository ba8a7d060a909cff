"""A game's prompt extended a round at a time (:class:`RunningPrompt`) is the prompt rendered whole, byte for byte.

The shipped cached layout is rendered from its blocks, the history extended by one line a round (see
:meth:`PromptBuilder.prompt`); every other template is rendered whole. Both must give the same messages and the
same cache breaks, so each game of the golden sweep (every wording setting) is played round by round both ways,
and the extended prompts are also checked against the golden file's digests.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from harness.game.horizon import FixedHorizon
from harness.players.model.prompts.builder import ORDERS, PromptBuilder, PromptLayout, PromptSettings, RunningPrompt
from harness.players.model.prompts.files import PROMPTS_DIR
from tests.unit.test_prompt_golden import GOLDENS, HORIZONS, LABELS, MOVES, _digest, _view
from tests.unit.test_prompts import make_view

GAME_MOVES = "CDDCCDCCDDCDCCCDDDCD"


@pytest.mark.parametrize("layout", list(PromptLayout))
def test_the_golden_sweeps_games_read_the_same_extended_a_round_at_a_time(layout: PromptLayout) -> None:
    digests = json.loads(GOLDENS[layout].read_text(encoding="utf-8"))["digests"]
    checked = 0
    for labels, fmt, window, persona in itertools.product(LABELS, ("free", "json", "label"), (None, 2),
                                                          (None, "cautious", "cooperative")):  # fmt: skip
        settings = PromptSettings(
            labels=LABELS[labels], answer_format=fmt, history_window=window, persona=persona, layout=layout
        )
        builder = PromptBuilder(settings)
        for order, horizon, seat in itertools.product(("CD", "DC"), HORIZONS, ("a", "b")):
            running = RunningPrompt()
            for played in range(len(MOVES) + 1):
                view = _view(seat, horizon, played)
                extended = builder.prompt(view, order, running)  # type: ignore[arg-type]
                assert extended == builder.prompt(view, order), (labels, fmt, window, persona, order, played)  # type: ignore[arg-type]
                name = f"{labels}|{fmt}|{order}|window={window}|persona={persona}|{horizon}|{seat}|played={played}"
                if name in digests:
                    assert _digest(extended.messages) == digests[name], name
                    checked += 1
    assert checked == len([name for name in digests if not name.startswith(("question|", "reask|"))])


def test_a_long_game_with_shuffled_options_reads_the_same_extended_as_rendered_whole() -> None:
    builder = PromptBuilder(PromptSettings(shuffle_options=True, answer_format="json"))
    running = RunningPrompt()
    for n in range(len(GAME_MOVES)):
        view = make_view(GAME_MOVES[:n], GAME_MOVES[::-1][:n], seat="b", horizon=FixedHorizon(len(GAME_MOVES)))
        order = ORDERS[n % 2]
        extended = builder.prompt(view, order, running)
        assert extended == builder.prompt(view, order)
        assert running.rows == n
        assert len(extended.breaks) == 1 + n  # the rules' end, then each history line's


def test_a_game_resumed_part_way_or_a_round_asked_again_reads_the_same() -> None:
    builder = PromptBuilder(PromptSettings())
    views = [make_view(GAME_MOVES[:n], GAME_MOVES[::-1][:n]) for n in range(8)]
    running = RunningPrompt()
    for n in (5, 6, 6, 7, 2, 3):  # resumed at round 6; round 7 asked twice; another start
        assert builder.prompt(views[n], "CD", running) == builder.prompt(views[n], "CD")


def test_only_the_shipped_cached_round_template_is_extended(tmp_path: Path) -> None:
    """A user's template (here the shipped one, copied) is rendered whole: its blocks may mean anything."""
    (tmp_path / "round.j2").write_text((PROMPTS_DIR / "round.j2").read_text(encoding="utf-8"), encoding="utf-8")
    view = make_view("CD", "DD")
    for settings in (PromptSettings(template_dir=str(tmp_path)), PromptSettings(history_window=3),
                     PromptSettings(layout=PromptLayout.CLASSIC)):  # fmt: skip
        running = RunningPrompt()
        assert PromptBuilder(settings).prompt(view, "CD", running) == PromptBuilder(settings).prompt(view)
        assert running == RunningPrompt()  # untouched
    running = RunningPrompt()
    PromptBuilder(PromptSettings()).prompt(view, "CD", running)
    assert running.rows == 2
