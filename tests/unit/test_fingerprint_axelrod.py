"""PDBench's fingerprints equal the Axelrod library's (4.14) on the same grid, turns and repetitions.

``tests/fixtures/axelrod_fingerprints.json`` was written by ``tests/axelrod_reference/generate_fingerprint_fixture.py``
with axelrod 4.14.0: ``AshlockFingerprint`` (step 0.25: 25 probe points) and ``TransitiveFingerprint`` (5 ``Random(p)``
opponents), 20 turns, 100 repetitions, of ALLC, ALLD, TFT, GRIM, WSLS, TF2T and GTFT. PDBench plays the same
fingerprints through ``pdbench fingerprint``'s config and engine and reads them with
:func:`harness.analysis.fingerprint.fingerprint`.

The two libraries draw from different random streams (axelrod's numpy generator, PDBench's seeded Python streams per
game), so axelrod's draws are not reproduced; instead:

* a cell where neither player nor probe is random (a deterministic strategy against a corner probe, or against
  RAND(0) or RAND(1)) must match exactly;
* any other cell, a mean over games of two independent samples of the same quantity, must lie within Z standard
  errors of the difference: Ashlock, sqrt(sd_a^2 / n_a + sd_p^2 / n_p) from the two samples' standard deviations over
  games (so a cell that is deterministic in both, e.g. TFT against a probe that only adds cooperation, must match
  exactly); transitive, each cell a mean of 0/1 moves, the pooled binomial sqrt(m (1 - m) (1 / n_a + 1 / n_p)).

Z = 4.5: 875 cells, about 380 of them sampled, so a false failure has probability about 380 x 7e-6 = 0.3% per seed
if the errors are normal. PDBench seeds 0-4 were checked: the largest deviation was 3.4 standard errors, and no seed
had more than one cell above 3 (the largest is in ``test_every_cell_within_z``'s message).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness.analysis.fingerprint import Fingerprint, fingerprint
from harness.config.presets.fingerprint import FingerprintKind, Grid, fingerprint_config
from harness.engine.runner import run_experiment
from harness.store.catalog import open_run

FIXTURE = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "axelrod_fingerprints.json").read_text())
STRATEGIES = list(FIXTURE["strategies"])
RANDOM = {"GTFT"}  # the fixture's stochastic strategies
Z = 4.5
EXACT = 1e-12
SEED = 7  # PDBench's own; axelrod's streams are not PDBench's, whatever the seed
ASHLOCK_AXIS = round(1 / FIXTURE["step"]) + 1


def play(folder: Path, name: str, kind: FingerprintKind, axis: int, repetitions: int, seed: int = SEED) -> Fingerprint:
    config = fingerprint_config(
        {"policy": name}, Grid(kind, axis), rounds=FIXTURE["turns"], repetitions=repetitions, seed=seed
    )
    run_id = f"{name}_{kind.value}_{seed}"
    assert run_experiment(config, results_dir=folder, run_id=run_id).status == "complete"
    with open_run(folder, run_id) as cat:
        return fingerprint(cat, run_id)


def deterministic_probe(key: tuple[float, ...]) -> bool:
    """A corner probe (Tit for Tat, its dual, ALLC, ALLD) or RAND(0), RAND(1): no random draw."""
    return all(v in (0.0, 1.0) for v in key)


def test_the_fixture_is_axelrods_grid() -> None:
    assert FIXTURE["axelrod_version"] == "4.14.0"
    points = [(c["x"], c["y"]) for c in FIXTURE["strategies"]["TFT"]["ashlock"]]
    assert points == [(k["x"], k["y"]) for k in Grid(FingerprintKind.ASHLOCK, ASHLOCK_AXIS).points]
    assert (
        FIXTURE["strategies"]["TFT"]["transitive"]["p"] == Grid(FingerprintKind.TRANSITIVE, FIXTURE["opponents"]).values
    )


@pytest.mark.parametrize("name", sorted(set(STRATEGIES) - RANDOM))
def test_deterministic_cells_match_exactly(tmp_path: Path, name: str) -> None:
    """One game per point is enough where nothing is drawn: the four corners and RAND(0), RAND(1)."""
    ashlock = play(tmp_path, name, FingerprintKind.ASHLOCK, 2, 1)
    for cell in FIXTURE["strategies"][name]["ashlock"]:
        if deterministic_probe((cell["x"], cell["y"])):
            assert ashlock.value(cell["x"], cell["y"]) == pytest.approx(cell["mean"], abs=EXACT), cell
    transitive = play(tmp_path, name, FingerprintKind.TRANSITIVE, 2, 1)
    reference = FIXTURE["strategies"][name]["transitive"]
    for p, row in zip(reference["p"], reference["cooperation"], strict=True):
        if deterministic_probe((p,)):
            assert [transitive.value(p, t + 1.0) for t in range(len(row))] == row, p


def deviations(folder: Path, seed: int) -> list[tuple[float, str]]:
    """Every cell's |difference| in standard errors (inf where a zero-error cell differs), with its name."""
    out: list[tuple[float, str]] = []
    for name in STRATEGIES:
        ashlock = play(folder, name, FingerprintKind.ASHLOCK, ASHLOCK_AXIS, FIXTURE["repetitions"], seed)
        for ref in FIXTURE["strategies"][name]["ashlock"]:
            mine = next(c for c in ashlock.cells if c.key == (ref["x"], ref["y"]))
            se = math.sqrt(ref["sd"] ** 2 / ref["games"] + (mine.sd or 0.0) ** 2 / mine.games)
            out.append((_z(mine.mean - ref["mean"], se), f"{name} ashlock({ref['x']}, {ref['y']})"))
        transitive = play(folder, name, FingerprintKind.TRANSITIVE, FIXTURE["opponents"], FIXTURE["repetitions"], seed)
        reference = FIXTURE["strategies"][name]["transitive"]
        n_a = reference["games"]
        for p, row in zip(reference["p"], reference["cooperation"], strict=True):
            for t, theirs in enumerate(row, start=1):
                mine = next(c for c in transitive.cells if c.key == (p, float(t)))
                pooled = (theirs * n_a + mine.mean * mine.games) / (n_a + mine.games)
                se = math.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / mine.games))
                out.append((_z(mine.mean - theirs, se), f"{name} transitive(p={p}) round {t}"))
    return out


def _z(difference: float, se: float) -> float:
    if abs(difference) <= EXACT:
        return 0.0
    return math.inf if se == 0 else abs(difference) / se


@pytest.mark.slow
def test_every_cell_within_z(tmp_path: Path) -> None:
    found = deviations(tmp_path, SEED)
    assert len(found) == len(STRATEGIES) * (ASHLOCK_AXIS**2 + FIXTURE["opponents"] * FIXTURE["turns"])
    worst = max(found)
    assert worst[0] <= Z, f"largest deviation {worst[0]:.2f} standard errors at {worst[1]}"
