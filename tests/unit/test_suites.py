"""The suites as data: each builds a valid eval config that follows its own protocol, also as stored."""

from __future__ import annotations

import pytest

from harness.config import parse_experiment
from harness.config.presets.suites import SUITES, get_suite
from harness.errors import ConfigError


@pytest.mark.parametrize("name", sorted(SUITES))
def test_a_suite_config_follows_its_protocol_also_as_stored_and_read_back(name: str) -> None:
    suite = SUITES[name]
    config = suite.config("mock/tft", replicates=2, seed=7, comprehension=[1, 5])
    assert config.suite == name and suite.deviations(config) == []
    stored = parse_experiment(config.resolved_dict())  # as `pdbench resume` reads a run's config
    assert stored.suite == name and stored.problems() == []
    assert [c.name for c in stored.experiment.conditions] == [c.name for c in config.experiment.conditions]


def test_fontana_opponents_are_eleven_rates_named_exactly() -> None:
    names = [c.name for c in SUITES["fontana2025"].config("mock/tft").experiment.conditions]
    assert names == [f"vs_RAND(p={p})" for p in ("0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8",
                                                 "0.9", "1.0")]  # fmt: skip


def test_suite_names_ignore_case_and_unknown_ones_list_the_suites() -> None:
    assert get_suite(" Akata2023 ").name == "akata2023"
    with pytest.raises(ConfigError, match=r"unknown suite 'akata'; the suites are: akata2023 \(Akata"):
        get_suite("akata")
