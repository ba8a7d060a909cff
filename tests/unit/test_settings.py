"""Settings read from PDBENCH_* environment variables (harness.config.run_settings): defaults, bounds, and the one-line
errors a bad value gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.calls.path import RetrySettings
from harness.config.run_settings import cache_path, results_dir, retry_settings
from harness.errors import ConfigError

RETRY_VARS = ("PDBENCH_MAX_ATTEMPTS", "PDBENCH_RETRY_SECONDS", "PDBENCH_TIMEOUT", "PDBENCH_BACKOFF")


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (*RETRY_VARS, "PDBENCH_CACHE", "PDBENCH_RESULTS"):
        monkeypatch.delenv(var, raising=False)


def test_retry_settings_default_and_read_each_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert retry_settings() == RetrySettings()
    for var, value in zip(RETRY_VARS, ("2", "30", "5.5", "0"), strict=True):
        monkeypatch.setenv(var, value)
    got = retry_settings()
    assert (got.max_attempts, got.max_seconds, got.timeout, got.backoff_initial) == (2, 30.0, 5.5, 0.0)


def test_an_empty_or_lower_case_variable_is_not_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PDBENCH_TIMEOUT", "")
    monkeypatch.setenv("pdbench_max_attempts", "3")
    assert retry_settings() == RetrySettings()


@pytest.mark.parametrize(
    ("var", "value", "bound"),
    [
        ("PDBENCH_TIMEOUT", "5000", "3,600"),
        ("PDBENCH_TIMEOUT", "inf", "3,600"),
        ("PDBENCH_BACKOFF", "nan", "3,600"),
        ("PDBENCH_BACKOFF", "-1", "3,600"),
        ("PDBENCH_RETRY_SECONDS", "1e9", "86,400"),
    ],
)
def test_seconds_out_of_range_are_refused_by_name(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str, bound: str
) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError) as refused:
        retry_settings()
    assert str(refused.value) == (
        f"{var}={value} in the environment is out of range: give a number of seconds from 0 to {bound}"
    )


@pytest.mark.parametrize(
    ("var", "value", "says"),
    [
        ("PDBENCH_MAX_ATTEMPTS", "x", "Input should be a valid integer"),
        ("PDBENCH_MAX_ATTEMPTS", "0", "Input should be greater than or equal to 1"),
        ("PDBENCH_TIMEOUT", "soon", "Input should be a valid number"),
        ("PDBENCH_TIMEOUT", "0", "Input should be greater than 0"),  # in range, but no attempt could finish
    ],
)
def test_other_bad_values_name_every_variable(monkeypatch: pytest.MonkeyPatch, var: str, value: str, says: str) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError) as refused:
        retry_settings()
    text = str(refused.value)
    assert text.startswith(f"invalid retry settings in the environment: {says}")
    assert text.endswith(f"({', '.join(RETRY_VARS)})")


def test_cache_and_results_folders_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert cache_path(tmp_path, False) == tmp_path / ".cache" / "responses.sqlite"
    assert cache_path(tmp_path, True) is None
    assert results_dir(None) == Path("results")
    monkeypatch.setenv("PDBENCH_CACHE", str(tmp_path / "c.sqlite"))
    monkeypatch.setenv("PDBENCH_RESULTS", str(tmp_path / "r"))
    assert cache_path(tmp_path / "elsewhere", False) == tmp_path / "c.sqlite"
    assert results_dir(None) == tmp_path / "r"
    assert results_dir(str(tmp_path / "given")) == tmp_path / "given"  # the option wins
    monkeypatch.setenv("PDBENCH_RESULTS", "")
    assert results_dir(None) == Path("results")
