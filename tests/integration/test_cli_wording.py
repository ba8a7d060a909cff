"""What the command line says, word for word where it once said it wrong: flags without a ``<bool>`` type,
default run ids that show their ``<timestamp>``, every config problem in one pass, and counts of one in the
singular ("1 game", never "1 games")."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from harness.cli import app
from harness.util.plural import plural
from tests.support.cli import pdbench

runner = CliRunner()


def command_paths(group: typer.main.TyperGroup | None = None, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and sub-command of ``pdbench`` (``("cache", "stats")``...), the root first."""
    group = group or typer.main.get_command(app)  # type: ignore[assignment]
    paths = [prefix]
    for name, command in group.commands.items():  # type: ignore[union-attr]
        if hasattr(command, "commands"):
            paths += command_paths(command, (*prefix, name))
        else:
            paths.append((*prefix, name))
    return paths


def help_text(*path: str) -> str:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"}, terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.slow
def test_no_flag_shows_a_bool_type_and_options_that_take_a_value_show_theirs() -> None:
    paths = command_paths()
    assert ("eval",) in paths and ("cache", "stats") in paths and len(paths) > 10
    for path in paths:
        text = help_text(*path)
        assert "<bool>" not in text, f"`pdbench {' '.join(path)} --help` shows <bool>"
    run = help_text("run")
    flags = [line for line in run.splitlines() if "--dry-run" in line or "--no-cache" in line or "--help " in line]
    assert len(flags) == 3 and not any("<" in line.split("  ")[0] for line in flags)
    assert any("--replicates" in line and "<int range>" in line for line in run.splitlines())


def test_default_run_ids_show_their_timestamp() -> None:
    assert "Run id (default eval_<timestamp>)." in help_text("eval")
    assert "tournament_<timestamp>" in " ".join(help_text("tournament").replace("│", " ").split())


def test_plural_reads_one_in_the_singular() -> None:
    assert [plural(n, "game") for n in (0, 1, 2, 1234)] == ["0 games", "1 game", "2 games", "1,234 games"]
    assert plural(1, "day") == "1 day" and plural(1.5, "day") == "1.5 days" and plural(2, "entry", "entries") == (
        "2 entries")  # fmt: skip
    assert plural(3, "game", number="1/3") == "1/3 games" and plural(1, "game", number="0/1") == "0/1 game"


ONE_OF_EACH = """
horizon: {type: fixed, n_rounds: 1}
experiment:
  replicates: 1
  conditions:
    - {name: only, agent_a: {policy: TFT}, agent_b: {policy: ALLD}}
"""


@pytest.mark.slow
def test_counts_of_one_are_singular_in_validate_and_run(tmp_path: Path) -> None:
    path = tmp_path / "one.yaml"
    path.write_text(ONE_OF_EACH)
    code, out, err = pdbench("validate", path)
    assert code == 0, err
    assert f"OK {path}: 1 condition × 1 replicate = 1 game, about 1 round." in " ".join(out.split())
    code, out, err = pdbench("run", path, "--dry-run", "--results", tmp_path / "r")
    assert code == 0, err
    assert "1 condition × 1 replicate = 1 game; rounds: 1;" in " ".join(out.split())
    code, out, err = pdbench("run", path, "--results", tmp_path / "r", "--run-id", "one")
    assert code == 0, err
    assert "complete: run one, 1/1 game, 1 round in " in " ".join(err.split())


def test_validate_reports_an_unknown_persona_beside_the_other_problems(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        """
noise: {prob: 2}
experiment:
  conditions:
    - agent_a: {model: mock/tft, persona: nosuch, temperature: 5}
      agent_b: {policy: TFT}
    - agent_a: {model: mock/tft, persona: alsomissing, prompts: {history_window: 0}, base_url: "http://x"}
      agent_b: {policy: NOPE}
    - agent_a: {model: mock/tft, persona: cooperative, max_tokens: 0}
      agent_b: {policy: TFT}
"""
    )
    code, _out, err = pdbench("validate", path)
    assert code != 0
    lines = [" ".join(line.split()) for line in err.split(" - ")[1:]]
    assert len(lines) == 7, err
    assert lines[0].startswith("noise.prob: Input should be less than or equal to 1")
    assert lines[1].startswith("experiment.conditions[0].agent_a.temperature: ")
    assert lines[2].startswith("experiment.conditions[0].agent_a: unknown persona 'nosuch'")
    assert lines[3].startswith("experiment.conditions[1].agent_a.prompts.history_window: ")
    assert lines[4].startswith("experiment.conditions[1].agent_a: base_url is given, but mock/tft is the offline mock")
    assert "Also: unknown persona 'alsomissing'" in lines[4]
    assert lines[5].startswith("experiment.conditions[1].agent_b.policy: unknown strategy 'NOPE'")
    assert lines[6].startswith("experiment.conditions[2].agent_a.max_tokens: ")
    # The third agent's persona exists: no problem is made up for it.
    assert "cooperative" not in lines[6]
