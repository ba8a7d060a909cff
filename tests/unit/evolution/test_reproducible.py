"""Same settings and seed, same trajectory, byte for byte, for every dynamics, with noise and random strategies
in play; another seed, another trajectory; and the live view sees every generation as it is recorded."""

from __future__ import annotations

import numpy as np
import pytest

from harness.evolution import EvolutionSettings, Trajectory, evolve

PLAYERS = ["TFT", "ALLD", "GTFT(p=0.3)", "RAND", "WSLS"]


def settings(dynamics: str, seed: int, **extra: object) -> EvolutionSettings:
    return EvolutionSettings(
        players=PLAYERS, counts=[6, 6, 6, 6, 6], dynamics=dynamics, generations=40, noise=0.05, mutation=0.02,
        k=3, seed=seed, horizon={"type": "geometric", "stop_prob": 0.05}, **extra,  # type: ignore[arg-type]
    )  # fmt: skip


def fingerprint(t: Trajectory) -> bytes:
    return b"|".join(
        [
            t.population.tobytes(),
            t.payoffs.values.tobytes(),
            t.payoffs.matches.tobytes(),
            repr((t.players, t.size, t.fixation, t.payoffs.source)).encode(),
        ]
    )


@pytest.mark.parametrize("dynamics", ["moran", "generational", "trust"])
@pytest.mark.parametrize("mode", ["exact", "estimated"])
def test_same_seed_same_bytes(dynamics: str, mode: str) -> None:
    first = evolve(settings(dynamics, 7, payoff_mode=mode, replicates=5))
    again = evolve(settings(dynamics, 7, payoff_mode=mode, replicates=5))
    assert fingerprint(first) == fingerprint(again)
    other = evolve(settings(dynamics, 8, payoff_mode=mode, replicates=5))
    assert fingerprint(first) != fingerprint(other)


def test_replicator_is_deterministic() -> None:
    s = EvolutionSettings(players=PLAYERS, shares=[0.2] * 5, dynamics="replicator", noise=0.05, replicates=5, seed=3)
    assert fingerprint(evolve(s)) == fingerprint(evolve(s))


@pytest.mark.parametrize("dynamics", ["moran", "generational", "trust"])
def test_the_live_view_sees_each_generation(dynamics: str) -> None:
    seen: list[tuple[int, list[int]]] = []

    def on_generation(generation: int, counts: np.ndarray) -> None:
        assert not counts.flags.writeable
        seen.append((generation, counts.tolist()))

    trajectory = evolve(settings(dynamics, 1), on_generation=on_generation)
    assert [g for g, _ in seen] == list(range(trajectory.generations + 1))
    assert [c for _, c in seen] == trajectory.population.tolist()
    assert not trajectory.population.flags.writeable


def test_trajectory_helpers() -> None:
    t = evolve(settings("generational", 2))
    shares = t.shares()
    assert shares.shape == (t.generations + 1, 5)
    assert np.allclose(shares.sum(axis=1), 1.0)
    final = t.final_shares()
    assert list(final) == ["TFT", "ALLD", "GTFT(generous_prob=0.3)", "RAND", "WSLS"]
    assert sum(final.values()) == pytest.approx(1.0)
    assert t.winner() == max(final, key=final.__getitem__)


def test_a_tied_lead_has_no_winner() -> None:
    t = evolve(EvolutionSettings(players=["TFT", "ALLD"], counts=[1, 1], generations=1), payoffs=np.zeros((2, 2)))
    tied = Trajectory(t.players, np.array([[1, 1]]), 2, None, t.payoffs)
    assert tied.winner() is None
    assert tied.final_shares() == {"TFT": 0.5, "ALLD": 0.5}


@pytest.mark.slow
def test_the_same_bytes_in_another_process() -> None:
    """Nothing depends on the interpreter's hash seed or on what ran before in the process."""
    import hashlib
    import os
    import subprocess
    import sys

    code = (
        "import hashlib, sys; sys.path.insert(0, '.');"
        "from tests.unit.evolution.test_reproducible import settings, fingerprint;"
        "from harness.evolution import evolve;"
        "print(hashlib.sha256(fingerprint(evolve(settings('moran', 7)))).hexdigest())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == hashlib.sha256(fingerprint(evolve(settings("moran", 7)))).hexdigest()
