"""``pdbench evolve --model-settings FILE``: a model player's temperature, max_tokens, prompts and parse policy
reach the requests its payoff games send (the loopback server records them) and the way its replies are read;
a bad value is refused in one paragraph before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.store.evolution_writer import read_evolution
from tests.support.cli import pdbench, sql_json
from tests.support.llm_server import FakeLLMServer, sequence, serve_to_the_cli
from tests.support.model_settings import PAYNE_SETTINGS as SETTINGS


@pytest.mark.slow
def test_the_settings_reach_every_model_call_and_are_stored_with_the_run(
    llm_server: FakeLLMServer, results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_to_the_cli(monkeypatch, llm_server)
    # A reply with reasoning and D on its last line, and a one-line "D" that the last-line rule cannot read.
    llm_server.configure(responder=sequence(["They may defect.\nD", "D"]))
    file = tmp_path / "models.yaml"
    file.write_text(SETTINGS)
    code, _, err = pdbench("evolve", "--players", "TFT,openai/test-model", "--counts", "2,2", "--rounds", "4",
                           "--replicates", "1", "--generations", "2", "--model-settings", file,
                           "--results", results, "--run-id", "ms")  # fmt: skip
    assert code == 0, err
    sent = [r.body for r in llm_server.requests if r.provider == "openai"]
    # The model's seats: 1 game against TFT and 2 of self-play, 4 rounds each, one request a round (no re-ask).
    assert len(sent) == 3 * 4
    assert all((body["temperature"], body["max_tokens"]) == (0.7, 1000) for body in sent)
    assert all("on the very last line and alone" in body["messages"][0]["content"] for body in sent)  # its template
    calls = sql_json(results, "SELECT response_text, action, reader FROM calls WHERE run_id = 'ms_payoffs'")
    flags = sql_json(results, "SELECT flagged_a, flagged_b FROM rounds WHERE run_id = 'ms_payoffs'")
    read = [c for c in calls if c["response_text"] == "They may defect.\nD"]
    refused = [c for c in calls if c["response_text"] == "D"]
    assert len(read) + len(refused) == 12 and refused
    assert all((c["action"], c["reader"]) == ("D", "last_line") for c in read)
    assert all((c["action"], c["reader"]) == (None, None) for c in refused)
    assert sum(r["flagged_a"] + r["flagged_b"] for r in flags) == len(refused)  # each a fallback round
    run, _ = read_evolution(results, "ms")
    assert run.settings.model_settings["openai/test-model"]["parse"]["reader"] == "last_line"
    [stored] = sql_json(results, "SELECT config_json FROM runs WHERE run_id = 'ms'")
    assert json.loads(stored["config_json"])["model_settings"]["openai/test-model"]["max_tokens"] == 1000


def test_a_bad_value_is_one_paragraph_before_anything_runs(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-evolve")
    file = tmp_path / "models.yaml"
    file.write_text("openai/test-model: {temperature: 5, parse: {reader: last_lines}}\n")
    code, out, err = pdbench("evolve", "--players", "TFT,openai/test-model", "--counts", "2,2",
                             "--model-settings", file, "--results", results, "--run-id", "bad")  # fmt: skip
    assert code == 2, err
    said = " ".join(err.split())
    assert "model_settings.openai/test-model.temperature: Input should be less than or equal to 2" in said
    assert "model_settings.openai/test-model.parse.reader: Input should be 'free_text' or 'last_line'" in said
    assert err.startswith("error:") and "Traceback" not in err and out == ""
    assert list(results.iterdir()) == []  # nothing ran
