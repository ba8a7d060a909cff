"""``pdbench evolve --scenario NAME``: the dashboard's lessons from the terminal. The run stores the scenario's very
settings (so the dashboard reads it as the scenario's too), options given beside it override them, and the result
ends with the lesson and its evidence, checked here against the stored run read with this test's own reading of
the population; ``--pace`` prints the population generation by generation."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from harness.evolution.scenarios import SCENARIOS, SCENARIOS_BY_KEY, same_settings, scenario_of
from harness.store.evolution_writer import read_evolution
from tests.support.cli import pdbench


def flat(text: str) -> str:
    return " ".join(text.split())


def test_list_shows_every_scenario_with_its_lesson(results: Path) -> None:
    code, out, err = pdbench("evolve", "--scenario", "list", "--width", "80")
    assert code == 0, err
    for scenario in SCENARIOS:
        assert scenario.key in out and scenario.lesson in flat(out)
    assert max(len(line) for line in out.splitlines()) <= 80
    assert list(results.iterdir()) == []


def test_help_names_every_scenario() -> None:
    code, out, _ = pdbench("evolve", "--help")
    assert code == 0
    help_text = flat(out.replace("│", " "))
    listed = re.search(r"as the dashboard's scenarios: (.+?) \(`?list`? shows", help_text)
    assert listed is not None, help_text
    names = listed.group(1).replace(" or ", ", ").split(", ")
    assert names == [s.key for s in SCENARIOS]
    assert "override its settings" in help_text


def test_a_scenario_runs_its_settings_and_prints_its_lesson_with_the_runs_numbers(results: Path) -> None:
    code, out, err = pdbench("evolve", "--scenario", "exploited", "--results", results, "--run-id", "lesson")
    assert code == 0, err
    run, trajectory = read_evolution(results, "lesson")
    scenario = SCENARIOS_BY_KEY["exploited"]
    assert same_settings(run.settings, scenario.settings()) and scenario_of(run.settings) is scenario
    population = np.asarray(trajectory.population)
    allc, alld, tft = (population[:, trajectory.players.index(p)] for p in ("ALLC", "ALLD", "TFT"))
    gone = int(np.flatnonzero(allc == 0)[0])  # read here: the first generation with no ALLC
    took_over = int(np.flatnonzero(tft == run.settings.size)[0])  # the first generation all TFT
    said = flat(out)
    assert f"💡 {scenario.lesson}" in said
    assert f"ALLC went from {allc[0]} to none by generation {gone}" in said
    assert f"ALLD grew on it from {alld[0]} to {alld.max()} (generation {int(alld.argmax())})" in said
    assert f"which every individual plays from generation {took_over}" in said
    assert "30 points a match from ALLC, which gets -10" in said  # 10 rounds of T = 3 against S = -1


def test_options_override_the_scenario_and_a_run_without_the_lesson_says_so(results: Path) -> None:
    code, out, err = pdbench(
        "evolve", "--scenario", "few-rounds", "--rounds", "10", "--results", results, "--run-id", "longer"
    )  # fmt: skip
    assert code == 0, err
    run, trajectory = read_evolution(results, "longer")
    base = SCENARIOS_BY_KEY["few_rounds"].settings()
    assert run.settings.horizon.n_rounds == 10 and base.horizon.n_rounds == 2
    stored, asked = run.settings.model_dump(mode="json"), base.model_dump(mode="json")
    assert {k for k in asked if stored[k] != asked[k]} == {"horizon"}  # every other setting the scenario's
    last = np.asarray(trajectory.population)[-1]
    assert last[trajectory.players.index("ALLD")] < run.settings.size  # ALLD did not take over ...
    said = flat(out)
    assert "💡" not in said  # ... so the lesson is not claimed
    assert "This run did not show the lesson of --scenario few_rounds (its settings changed: horizon)" in said


def test_pace_prints_each_generation_that_changed(results: Path) -> None:
    code, out, err = pdbench(
        "evolve", "--scenario", "exploited", "--pace", "0", "--results", results, "--run-id", "paced", "--width", "80"
    )  # fmt: skip
    assert code == 0, err
    _, trajectory = read_evolution(results, "paced")
    rows = np.asarray(trajectory.population)
    lines = [line for line in out.splitlines() if line.startswith("generation ")]
    changed = [g for g in range(len(rows)) if g == 0 or g == len(rows) - 1 or not np.array_equal(rows[g], rows[g - 1])]
    assert [int(line.split()[1]) for line in lines] == changed
    for line, g in zip(lines, changed, strict=True):
        counts = [int(n) for n in re.findall(r"(?:ALLC|ALLD|TFT) (\d+) \(", line)]
        assert counts == rows[g].tolist(), line
    assert out.index(lines[-1]) < out.index("Final shares")  # narrated before the result


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--scenario", "exploted"], "--scenario 'exploted' is not a scenario (did you mean exploited?)"),
        (["--scenario", "exploited", "--players", "TFT,WSLS"], "give each one its individuals with --counts"),
        (["--scenario", "noise", "--sweep", "noise=0,0.1"], "--scenario noise is one run"),
        (["--scenario", "noise", "--suite", "payne2025"], "--suite and --scenario each set a whole population"),
        (["--scenario", "noise", "--pace", "-1"], "Invalid value for '--pace'"),
        (["--counts", "5,5,5,5", "--sweep", "noise=0,0.1", "--pace", "1"], "--pace narrates one run"),
    ],
)
def test_bad_scenario_input_is_one_paragraph_before_anything_runs(results: Path, args: list[str], says: str) -> None:
    code, out, err = pdbench("evolve", *args, "--results", results)
    assert code == 2, err
    assert says in flat(err), err
    assert "Traceback" not in err and out == ""
    assert list(results.iterdir()) == []
