"""The SQL the dashboard shows under a fingerprint (``reproducing_sql``) gives the cells the analysis reads, for both
kinds: a reader who runs it with ``pdbench sql`` checks the figure against the games."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.analysis.fingerprint import fingerprint, probe_points, reproducing_sql
from harness.config.presets.fingerprint import FingerprintKind, Grid, fingerprint_config
from harness.engine.runner import run_experiment
from harness.store.catalog import open_run


@pytest.mark.parametrize("kind", list(FingerprintKind))
def test_the_shown_sql_gives_the_fingerprints_cells(kind: FingerprintKind, tmp_path: Path) -> None:
    config = fingerprint_config({"policy": "GTFT"}, Grid(kind, 2), rounds=4, repetitions=2)  # GTFT draws
    run_experiment(config, results_dir=tmp_path, run_id="it's")  # a quote in the id: the literal is escaped
    with open_run(tmp_path, "it's") as cat:
        fp = fingerprint(cat, "it's")
        rows = cat.query(reproducing_sql(fp.kind, "it's"))[1]
        points = probe_points(str(cat.require_run("it's")["config_json"]))
    cells = {c.key: (c.games, c.mean, c.sd) for c in fp.cells}
    shown = {
        (*points[row[0]][1], *([float(row[1])] if len(row) == 5 else [])): (row[-3], row[-2], row[-1]) for row in rows
    }
    assert set(shown) == set(cells) and len(cells) == (4 if kind is FingerprintKind.ASHLOCK else 8)
    for key, (games, mean, sd) in cells.items():
        assert shown[key][0] == games == 2
        assert shown[key][1] == pytest.approx(mean)
        assert shown[key][2] == pytest.approx(sd, nan_ok=True)
