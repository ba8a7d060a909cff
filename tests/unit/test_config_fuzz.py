"""Fuzzing the config loader (issue 9): every generated config file either validates or is refused with a
ConfigError, within a time limit, and never with a traceback.

The configs are plausible but wrong: the real sections and keys, holding values that are right or of the
wrong type, huge, negative, NaN or infinite, booleans, numbers in quotes, deep nesting, unknown keys, refs
to devices, dotfiles as personas, mock options out of range; and the YAML text itself is sometimes given a
duplicate key, a truncation or a nesting thousands deep. A config that validates must also survive what a
run does with it: its plan is sized, its resolved form is stored as JSON (no NaN or infinity may be in it),
and that stored form validates again to the same thing (which is what `pdbench resume` reads).

500 examples (PDBENCH_FUZZ_EXAMPLES) take about 9 s here, 10 s with the interpreter start (docs/development.md).
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from harness.config import ExperimentConfig, load_experiment, parse_experiment
from harness.config.plan import summarize
from harness.errors import ConfigError

EXAMPLES = int(os.environ.get("PDBENCH_FUZZ_EXAMPLES", "500"))
SECONDS_PER_EXAMPLE = 10.0  # a valid config with model players takes some 50 ms (its templates are rendered)

NUMBERS = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, -1, 2, 0.5, 2**31, 2**63, 2**64, 10**19, 1e19, 1e-300, 1e308, float("nan")]),
)
TEXTS = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        [
            "5",
            "0.1",
            "1e19",
            "inf",
            "nan",
            "true",
            "",
            "TFT",
            "mock/tft",
            "/dev/zero",
            ".env",
            "x" * 300,
            "{{ x }}",
            "../../etc/passwd",
        ]
    ),
)
NESTED = st.recursive(
    st.integers() | st.text(max_size=3) | st.booleans(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=25,
)
WEIRD = st.one_of(NUMBERS, st.booleans(), st.none(), TEXTS, NESTED)


# How wrong one example is, the same for all its values: nowhere (so that valid configs, with model players
# too, go through every check), here and there, or almost everywhere.
CHAOS = st.shared(st.sampled_from(["none", "some", "much"]), key="chaos")


def sometimes(odds: int, rare: st.SearchStrategy[Any], usual: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``usual``, or ``rare`` once in ``odds`` draws ("some" chaos) or every other draw ("much")."""

    def pick(chaos: str) -> st.SearchStrategy[Any]:
        if chaos == "none":
            return usual
        n = odds if chaos == "some" else 2
        return st.integers(0, n - 1).flatmap(lambda i: rare if i == 0 else usual)

    return CHAOS.flatmap(pick)


def field(plausible: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A key's value: plausible, or (with chaos) anything at all."""
    return sometimes(25, WEIRD, plausible)


def section(required: dict[str, st.SearchStrategy[Any]], optional: dict[str, st.SearchStrategy[Any]]) -> Any:
    """A mapping with the section's real keys, sometimes with an unknown key as well."""
    known = st.fixed_dictionaries(
        {k: field(v) for k, v in required.items()}, optional={k: field(v) for k, v in optional.items()}
    )
    extra = st.dictionaries(st.sampled_from(["extra", "n_round", "seeds", "typo"]), WEIRD, max_size=1)
    return st.builds(lambda a, b: {**a, **b}, known, sometimes(20, extra, st.just({})))


PROB = sometimes(10, st.sampled_from([1.5, -0.1, 1e-320, True]), st.floats(min_value=0, max_value=1))
COUNT = sometimes(10, st.sampled_from([-2, 0, 10**6, 10**6 + 1, 10**7, 10**9]), st.integers(1, 60))
CELL = sometimes(10, st.lists(NUMBERS, min_size=1, max_size=3), st.lists(st.integers(-5, 10), min_size=2, max_size=2))
NAME = sometimes(5, TEXTS, st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,15}", fullmatch=True))
PAYOFFS = st.fixed_dictionaries(
    {
        "C": st.fixed_dictionaries({"C": field(CELL), "D": field(CELL)}),
        "D": st.fixed_dictionaries({"C": field(CELL), "D": field(CELL)}),
    }
)
PARAMETRIZED = st.one_of(
    section({"policy": st.just("GTFT")}, {"generous_prob": PROB}),
    section({"policy": st.just("RAND")}, {"p": PROB}),
    section({"policy": st.just("DONCE")}, {"round": COUNT}),
)
POLICY = section(
    {"policy": sometimes(10, st.just("NOPE"), st.sampled_from(["TFT", "ALLD", "WSLS", "tft", "GRIM"]))},
    {"name": NAME},
)
MODEL = section(
    {
        "model": sometimes(
            5,
            st.sampled_from(
                [
                    "mock/tft?seed=inf",
                    "mock/tft?latency_ms=inf",
                    "mock/cooperator?p=2",
                    "mock/nope",
                    "nope",
                    "mock/",
                    "mock/tft?p=1&p=0",
                ]
            ),
            st.sampled_from(
                [
                    "mock/tft",
                    "mock/random?p=0.3",
                    "mock/grim?seed=7",
                    "openai/gpt-4o-mini",
                    "anthropic/claude-sonnet-4-5",
                ]
            ),
        )
    },
    {
        "temperature": PROB,
        "top_p": PROB,
        "max_tokens": COUNT,
        "persona": sometimes(
            3,
            st.sampled_from(["/etc/passwd", ".env", "x" * 300, "nope.md", "personas/.x.md"]),
            st.sampled_from(["cooperative", "neutral"]),
        ),
        "api_key_env": st.just("MY_KEY"),
        "prompts": section(
            {},
            {
                "history_window": COUNT,
                "shuffle_options": st.booleans(),
                "answer_format": st.sampled_from(["free", "json", "label", "xml"]),
                "labels": section({}, {"cooperate": TEXTS, "defect": TEXTS}),
            },
        ),
        "parse": section({}, {"max_retries": COUNT, "on_failure": st.sampled_from(["defect", "random", "boom"])}),
        "limits": section(
            {},
            {
                "concurrency": COUNT,
                "rpm": sometimes(3, NUMBERS, st.floats(0.1, 1e6)),
                "tpm": sometimes(3, NUMBERS, st.floats(100, 1e9)),
            },
        ),
        "comprehension": section(
            {"rounds": st.lists(COUNT, min_size=1, max_size=3, unique=True)},
            {"questions": sometimes(5, st.lists(TEXTS, max_size=2), st.just(["payoff", "horizon"]))},
        ),
    },
)
REF = section(
    {"ref": sometimes(3, st.sampled_from(["missing.yaml", "/dev/zero", "", ".", "deep.yaml"]), st.just("agents.yaml"))},
    {"overrides": section({}, {"policy": st.sampled_from(["TFT", "GTFT"]), "generous_prob": PROB})},
)
HORIZON = sometimes(
    4,
    section(
        {"type": st.sampled_from(["forever", "geometric", "fixed"])},
        {"n_rounds": COUNT, "stop_prob": PROB, "max_rounds": COUNT},
    ),
    st.one_of(
        section({"type": st.just("fixed")}, {"n_rounds": COUNT}),
        section(
            {"type": st.just("geometric"), "stop_prob": sometimes(5, st.sampled_from([1e-5, 1e-300]), PROB)},
            {"max_rounds": COUNT},
        ),
    ),
)
NOISE = section({"prob": PROB}, {}) | PROB
CONDITION = section(
    {"agent_a": st.one_of(POLICY, PARAMETRIZED, MODEL, REF), "agent_b": st.one_of(POLICY, PARAMETRIZED, MODEL, REF)},
    {"name": NAME, "game": section({"payoff_matrix": PAYOFFS}, {}), "horizon": HORIZON, "noise": NOISE},
)
PLAIN_CONFIG = section(
    {"experiment": section({"conditions": st.lists(CONDITION, min_size=1, max_size=3)}, {"replicates": COUNT})},
    {
        "kind": sometimes(5, st.just("other"), st.sampled_from(["experiment", "tournament", "eval"])),
        "run": section({}, {"run_id": NAME, "seed": sometimes(5, NUMBERS, st.integers(0, 2**63 - 1)), "output": NAME}),
        "game": section({"payoff_matrix": PAYOFFS}, {}),
        "horizon": HORIZON,
        "noise": NOISE,
        "metrics": section({"collapse": section({}, {"k": COUNT, "cooperation_threshold": PROB})}, {}),
    },
)
# A suite fixes a protocol that a random config rarely follows, so a suite is named in one config in ten.
CONFIG = st.builds(
    lambda config, suite: config if suite is None else {"suite": suite, **config},
    PLAIN_CONFIG,
    sometimes(10, st.sampled_from(["akata2023", "fontana2025", "none"]), st.none()),
)
TEXT_CHANGES = sometimes(
    4,
    st.tuples(st.sampled_from(["duplicate line", "truncate", "deep nesting"]), st.integers(0, 10_000)),
    st.just(("none", 0)),
)


def as_yaml(config: Any, change: tuple[str, int]) -> str:
    text = yaml.safe_dump(config, sort_keys=False, allow_unicode=True, width=10_000)
    kind, at = change
    lines = text.splitlines(keepends=True)
    if kind == "duplicate line":
        i = at % len(lines)
        lines.insert(i, lines[i])
    elif kind == "truncate":
        return text[: at % (len(text) + 1)]
    elif kind == "deep nesting":
        lines.append("extra: " + "[" * (60 + at % 5000) + "]" * (60 + at % 5000) + "\n")
    return "".join(lines)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuzz")
    (path / "agents.yaml").write_text("policy: TFT\n")
    (path / "deep.yaml").write_text("policy: " + "[" * 3000 + "]" * 3000 + "\n")
    return path


class _TooSlow(Exception):
    pass


def _too_slow(signum: int, frame: object) -> None:
    raise _TooSlow


@pytest.fixture
def time_limit() -> Iterator[None]:
    """Every example's load is stopped (and the test fails) if it runs past SECONDS_PER_EXAMPLE."""
    previous = signal.signal(signal.SIGALRM, _too_slow)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def load_within_the_limit(path: Path) -> tuple[ExperimentConfig | None, str | None, float]:
    started = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, SECONDS_PER_EXAMPLE)
    try:
        config = load_experiment(path)
        summarize(config)
        return config, None, time.monotonic() - started
    except ConfigError as exc:
        return None, str(exc), time.monotonic() - started
    except _TooSlow:
        pytest.fail(f"loading took longer than {SECONDS_PER_EXAMPLE} s:\n{path.read_text()[:2000]}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


@pytest.mark.slow
@settings(
    max_examples=EXAMPLES,
    deadline=None,  # the time limit is ours (above), the same on a slow CI machine as here
    database=None,  # nothing written into the repository
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(config=CONFIG, change=TEXT_CHANGES)
def test_every_config_validates_or_gets_a_config_error(
    folder: Path, time_limit: None, config: Any, change: tuple[str, int]
) -> None:
    path = folder / "exp.yaml"
    path.write_text(as_yaml(config, change), encoding="utf-8")
    loaded, error, seconds = load_within_the_limit(path)
    assert seconds < SECONDS_PER_EXAMPLE
    if loaded is None:
        assert error and "Traceback" not in error
        event("refused")
        return
    event(f"valid, {'with' if summarize(loaded).has_models else 'without'} model players")
    stored = json.dumps(loaded.resolved_dict(), sort_keys=True, allow_nan=False)  # what a run stores
    again = parse_experiment(json.loads(stored), source="the stored config", base_dir=folder)  # what resume reads
    assert json.dumps(again.resolved_dict(), sort_keys=True) == stored
