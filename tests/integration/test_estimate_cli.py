"""``--dry-run`` prints the estimate and checks the keys; ``--max-cost`` refuses a run estimated above it before any
call, and ``--despite-estimate`` starts it anyway."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import pdbench


def flat(text: str) -> str:
    return " ".join(text.split())


EVAL = ("eval", "--model", "openai/gpt-4o-mini", "--opponents", "TFT,ALLD", "--rounds", "100", "--dry-run")


def test_eval_dry_run_estimates_and_says_a_missing_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)  # no .env here
    code, out, err = pdbench(*EVAL, "--results", tmp_path)
    assert code == 1 and "Traceback" not in err
    text = flat(out)
    assert "600 calls" in text and "of them from the provider's cache" in text and "batch $" in text
    assert "OPENAI_API_KEY" in flat(err) and "would not start" in flat(err)
    assert not list(tmp_path.glob("*.duckdb"))  # nothing played


def test_max_cost_below_the_estimate_refuses_and_despite_estimate_allows(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    code, out, err = pdbench(*EVAL, "--max-cost", "0.001", "--results", tmp_path)
    assert code != 0 and "above --max-cost $0.001" in flat(err) and "--despite-estimate" in flat(err)
    code, out, err = pdbench(*EVAL, "--max-cost", "0.001", "--despite-estimate", "--results", tmp_path)
    assert code == 0, err
    assert "every model's key is set" in flat(out)


def test_run_dry_run_prints_the_estimate_per_model(tmp_path: Path) -> None:
    config = tmp_path / "two.yaml"
    config.write_text(
        "horizon: {n_rounds: 10}\nexperiment:\n  replicates: 2\n  conditions:\n"
        "    - {name: x, agent_a: {model: mock/tft}, agent_b: {model: mock/grim}}\n"
    )
    code, out, err = pdbench("run", config, "--dry-run", "--results", tmp_path)
    assert code == 0, err
    text = flat(out)
    assert "mock/tft: 20 calls" in text and "mock/grim: 20 calls" in text and "plays offline" in text


def test_a_model_priced_without_a_cached_input_price_is_warned_of(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai/gpt-9*: {input: 1.0, output: 2.0}\n")
    code, _out, err = pdbench("eval", "--model", "openai/gpt-9", "--opponents", "TFT", "--rounds", "3", "--dry-run",
                              "--prices", prices, "--results", tmp_path)  # fmt: skip
    assert code == 0, err
    assert "openai/gpt-9: the price table gives no cached_input price" in flat(err)
    code, _out, err = pdbench(*EVAL, "--results", tmp_path)  # gpt-4o-mini has one: nothing said
    assert "cached_input" not in flat(err)
