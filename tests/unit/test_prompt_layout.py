"""The cached prompt layout (the default): each round's prompt is the last one's with the newest history line
added and a new ending, so a provider's prompt cache reads all but the end; the template marks where the reusable
starts end; settings that defeat it are named; the classic layout stays what it was and old runs resume in it."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from harness.config import parse_experiment
from harness.config.loading import as_played
from harness.game.horizon import FixedHorizon, GeometricHorizon
from harness.players.model.labels import ActionLabels
from harness.players.model.prompts.builder import ORDERS, PromptBuilder, PromptLayout, PromptSettings, game_views
from tests.unit.test_prompts import make_view

LABELS = [ActionLabels(), ActionLabels(cooperate="J", defect="F"), ActionLabels(cooperate="Blue", defect="Red")]
MOVES = "CDDCCDCCDD"


def _views(horizon: object) -> list[object]:
    return [make_view(MOVES[:n], MOVES[::-1][:n], seat=seat, horizon=horizon)  # type: ignore[arg-type]
            for seat in ("a", "b") for n in range(len(MOVES))]  # fmt: skip


@pytest.mark.parametrize(
    ("labels", "fmt", "persona", "shuffle"),
    list(itertools.product(LABELS, ("free", "json", "label"), (None, "cautious"), (False, True))),
)
def test_each_rounds_prompt_is_the_last_ones_up_to_its_last_break_then_more(
    labels: ActionLabels, fmt: str, persona: str | None, shuffle: bool
) -> None:
    builder = PromptBuilder(PromptSettings(labels=labels, answer_format=fmt, persona=persona, shuffle_options=shuffle))  # type: ignore[arg-type]
    for horizon in (FixedHorizon(10), GeometricHorizon(0.1)):
        views = _views(horizon)
        for seat in (0, 1):
            game = views[seat * len(MOVES) : (seat + 1) * len(MOVES)]
            prompts = [builder.prompt(view, ORDERS[i % 2] if shuffle else "CD") for i, view in enumerate(game)]  # type: ignore[arg-type]
            for before, after in itertools.pairwise(prompts):
                assert before.messages[0] == after.messages[0]  # the system prompt: the same in every round
                ((index, last),) = before.breaks[-1:]
                reused = before.messages[index]["content"][:last]
                assert after.messages[index]["content"].startswith(reused)
                assert len(after.breaks) == len(before.breaks) + 1  # one more round in the history
                assert after.breaks[: len(before.breaks)] == before.breaks


def test_the_breaks_end_the_rules_and_each_history_line_and_are_not_in_the_text() -> None:
    prompt = PromptBuilder(PromptSettings()).prompt(game_views(5)[4])  # round 5: four rounds played
    content = prompt.messages[-1]["content"]
    assert "\ue000" not in content and "\ue000" not in prompt.messages[0]["content"]
    ends = [content[:offset] for _index, offset in prompt.breaks]
    assert all(index == 1 for index, _ in prompt.breaks) and len(ends) == 5
    assert ends[0].endswith("you get 1 and they get 1.")  # the last payoff line
    for round_no, end in enumerate(ends[1:], start=1):
        assert end.splitlines()[-1].startswith(f"- Round {round_no}: ")
    assert content[prompt.breaks[-1][1] :].lstrip().startswith("This is round 5 of 5.")


def test_the_classic_layout_marks_no_breaks_and_says_why_the_cache_cannot_help() -> None:
    builder = PromptBuilder(PromptSettings(layout=PromptLayout.CLASSIC))
    assert builder.prompt(game_views(3)[2]).breaks == ()
    assert builder.prompt(game_views(3)[2]).messages[-1]["content"].startswith("This is round 3 of 3.")
    assert "the classic layout starts every round's prompt with the round number" in (builder.prefix_problem() or "")


@pytest.mark.parametrize(
    ("settings", "cause"),
    [
        ({}, None),
        ({"shuffle_options": True}, None),  # the cached layout shuffles the question only
        ({"history_window": 4}, "the history window (4 rounds) drops the oldest round"),
        ({"layout": "classic", "shuffle_options": True}, "the classic layout"),
    ],
)
def test_prefix_problem_names_the_setting_that_breaks_the_shared_start(
    settings: dict[str, object], cause: str | None
) -> None:
    problem = PromptBuilder(PromptSettings.model_validate(settings)).prefix_problem()
    if cause is None:
        assert problem is None
    else:
        assert problem is not None and cause in problem and "prompts.layout: cached" in problem


def test_a_users_template_that_rewrites_its_start_is_named(tmp_path: Path) -> None:
    (tmp_path / "round.j2").write_text("Round {{ round }}. {{ labels.cooperate }} or {{ labels.defect }}?\n")
    builder = PromptBuilder(PromptSettings(template_dir=str(tmp_path)))
    assert "the round template ('round.j2') changes its start" in (builder.prefix_problem() or "")
    assert builder.layout_name == "own: round.j2"


def test_the_layout_recorded_per_call_names_the_templates() -> None:
    assert PromptBuilder(PromptSettings()).layout_name == "cached"
    assert PromptBuilder(PromptSettings(layout=PromptLayout.CLASSIC)).layout_name == "classic"
    suite = PromptSettings(round_template="suites/fontana2025/round.j2", system_template="suites/fontana2025/system.j2")
    assert PromptBuilder(suite).layout_name == "suites/fontana2025/round.j2"


def _config(agent: dict[str, object]) -> dict[str, object]:
    return {"horizon": {"n_rounds": 5}, "experiment": {"replicates": 1, "conditions": [
        {"name": "x", "agent_a": agent, "agent_b": {"policy": "TFT"}}]}}  # fmt: skip


def test_a_run_stored_before_layouts_resumes_in_the_classic_layout() -> None:
    old = _config({"model": "mock/tft", "prompts": {"answer_format": "free"}})
    new = _config({"model": "mock/tft", "prompts": {"layout": "cached"}})
    strategy = _config({"policy": "ALLD"})
    assert as_played(old)["experiment"]["conditions"][0]["agent_a"]["prompts"]["layout"] == "classic"  # type: ignore[index]
    assert as_played(new)["experiment"]["conditions"][0]["agent_a"]["prompts"]["layout"] == "cached"  # type: ignore[index]
    assert as_played(strategy)["experiment"]["conditions"][0]["agent_a"] == {"policy": "ALLD"}  # type: ignore[index]
    agent = parse_experiment(as_played(old)).experiment.conditions[0].agent_a
    assert agent.prompts.layout is PromptLayout.CLASSIC  # type: ignore[union-attr]


def test_validate_warns_of_prompts_that_defeat_a_providers_cache_and_only_for_paid_models() -> None:
    windowed = parse_experiment(_config({"model": "openai/gpt-4o-mini", "prompts": {"history_window": 3}}))
    assert any("agent_a: each round's prompt does not extend the last one's (the history window" in w
               for w in windowed.warnings())  # fmt: skip
    assert not [w for w in parse_experiment(_config({"model": "openai/gpt-4o-mini"})).warnings() if "prompt" in w]
    mock = parse_experiment(_config({"model": "mock/tft", "prompts": {"history_window": 3}}))
    assert not [w for w in mock.warnings() if "prompt" in w]  # the offline mock has no cache to defeat


def test_eval_takes_the_layout_and_refuses_an_unknown_one_in_a_sentence() -> None:
    from harness.config.presets.evaluation import eval_config
    from harness.errors import ConfigError

    config = eval_config("mock/tft", opponents=["TFT"], rounds=3, prompt_layout="classic")
    assert config.experiment.conditions[0].agent_a.prompts.layout is PromptLayout.CLASSIC  # type: ignore[union-attr]
    assert eval_config("mock/tft", opponents=["TFT"], rounds=3).experiment.conditions[0].agent_a.prompts.layout is (  # type: ignore[union-attr]
        PromptLayout.CACHED
    )
    with pytest.raises(ConfigError, match=r"--prompt-layout is cached .* or classic .*; got 'bogus'"):
        eval_config("mock/tft", opponents=["TFT"], rounds=3, prompt_layout="bogus")


def test_a_shipped_folder_named_as_template_dir_is_recorded_and_rendered_as_itself() -> None:
    """The payne2025 suite's model settings name ``template_dir: prompts/suites/payne2025``: its round.j2 is shipped
    but is not the cached layout's, so it is recorded by its path and rendered whole, never a block at a time."""
    from harness.players.model.prompts.builder import RunningPrompt
    from harness.players.model.prompts.files import PROMPTS_DIR

    builder = PromptBuilder(PromptSettings(template_dir=str(PROMPTS_DIR / "suites" / "payne2025")))
    assert builder.layout_name == "suites/payne2025/round.j2"
    running = RunningPrompt()
    views = game_views(3)
    assert [builder.prompt(v, running=running).messages for v in views] == [builder.render(v) for v in views]
