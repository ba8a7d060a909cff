"""Generate the EGTtools reference fixture of PDBench's evolutionary analysis (``pdbench analyze``).

For a few payoff tables (row player's payoff per round against the column player), population sizes Z and
intensities beta, computes with EGTtools' pairwise comparison (Fermi rule) process:

* the fixation matrix and the small-mutation-limit stationary distribution, with ``egttools.analytical.
  StochDynamics`` (``transition_and_fixation_matrix``: ``fixation[i, j]`` is the probability that one j mutant
  fixes among i residents; ``calculate_stationary_distribution`` with mu = 0), and the fixation matrix again with
  the C++ ``egttools.analytical.PairwiseComparison`` on a ``Matrix2PlayerGameHolder``;
* the gradient of selection of every pair i < j, ``StochDynamics.gradient_selection(k, invader, resident,
  beta)`` for k = 1 .. Z - 1,

and writes ``tests/fixtures/egttools_analysis.json``. PDBench's own code computes the same figures in
``tests/unit/analysis/test_evolutionary_egttools.py`` and must agree within 1e-9. EGTtools has no Moran process;
the Moran figures are checked against closed forms instead. StochDynamics returns 0 for a fixation probability
below about 1e-7 (it stops summing there), so the settings here keep every one above that (checked).

EGTtools is NOT a PDBench dependency (PDBench never imports it): it lives in its own virtualenv::

    python3 -m venv /tmp/egtvenv && /tmp/egtvenv/bin/pip install egttools numpy
    /tmp/egtvenv/bin/python tests/reference/generate_egttools_fixture.py

``--check`` recomputes and compares with the committed file (exit status 1 on a difference above 1e-12).
"""

import argparse
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "egttools_analysis.json"

# name -> (players, table of payoffs per round: row against column)
TABLES = {
    # ALLC, ALLD, TFT over 10 rounds of the default game (T=5, R=3, P=1, S=0), worked by hand: TFT loses only
    # the first round to ALLD (0 then 1 x 9 = 9 over 10 rounds) and ALLD gains it (5 + 9 = 14).
    "allc_alld_tft_10_rounds": (
        ["ALLC", "ALLD", "TFT"],
        [[3.0, 0.0, 3.0], [5.0, 1.0, 1.4], [3.0, 0.9, 3.0]],
    ),
    # A hawk-dove table (coexistence) beside a coordination game's strategy: one of each contest.
    "hawk_dove_and_coordination": (
        ["HAWK", "DOVE", "COORD"],
        [[-1.0, 4.0, 0.5], [0.0, 2.0, 1.0], [0.2, 1.5, 2.5]],
    ),
    # A measured table: 5 players (a mock model among them) in a tournament of 50 rounds, 10 games a pair, noise
    # 0.05 (pdbench tournament --players TFT,ALLD,GTFT,WSLS,mock/tft --rounds 50 --replicates 10 --noise 0.05
    # --seed 7), each cell the mean payoff per round over its games, rounded to 6 decimals.
    "tournament_with_mock_model": (
        ["ALLD", "GTFT", "TFT", "WSLS", "mock/tft"],
        [
            [1.165, 2.44, 1.46, 2.97, 1.32],
            [0.75, 2.844, 2.678, 2.4, 2.708],
            [1.14, 2.848, 2.232, 2.25, 2.272],
            [0.67, 2.73, 2.25, 2.72, 2.42],
            [1.1, 2.868, 2.252, 2.42, 2.432],
        ],
    ),
}
SETTINGS = [(5, 1.0), (10, 0.5), (30, 0.1), (30, 0.25)]  # (Z, beta): every fixation probability above 1e-6


def compute():
    import egttools
    import numpy as np
    from egttools.analytical import PairwiseComparison, StochDynamics
    from egttools.games import Matrix2PlayerGameHolder

    cases = []
    for name, (players, table) in TABLES.items():
        payoffs = np.array(table, dtype=np.float64)
        s = len(players)
        for z, beta in SETTINGS:
            dyn = StochDynamics(s, payoffs, z, group_size=2, mu=0)
            _, fixation = dyn.transition_and_fixation_matrix(beta)
            stationary = dyn.calculate_stationary_distribution(beta)
            game = Matrix2PlayerGameHolder(s, payoffs)
            _, fixation_cpp = PairwiseComparison(z, game).calculate_transition_and_fixation_matrix_sml(beta)
            off = ~np.eye(s, dtype=bool)
            if fixation[off].min() < 1e-6:
                raise SystemExit(f"{name}, Z={z}, beta={beta}: a fixation probability under 1e-6 (StochDynamics cuts)")
            gradients = {
                f"{i},{j}": [float(dyn.gradient_selection(k, i, j, beta)) for k in range(1, z)]
                for i in range(s)
                for j in range(i + 1, s)
            }
            cases.append(
                {
                    "table": name,
                    "players": players,
                    "payoffs": table,
                    "population": z,
                    "beta": beta,
                    # rho[i][j]: one i mutant among Z - 1 j residents (PDBench's order; EGTtools' transposed)
                    "rho": np.asarray(fixation).T.tolist(),
                    "rho_cpp": np.asarray(fixation_cpp).T.tolist(),
                    "stationary": np.asarray(stationary).tolist(),
                    "gradients": gradients,
                }
            )
    version = egttools.__version__.strip("\"'")  # 0.1.14.2 reports it with its quotes
    return {"egttools_version": version, "generator": "tests/reference/generate_egttools_fixture.py", "cases": cases}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file instead of writing")
    args = parser.parse_args()
    data = compute()
    if args.check:
        import numpy as np

        old = json.loads(OUT.read_text())
        for a, b in zip(old["cases"], data["cases"], strict=True):
            for key in ("rho", "rho_cpp", "stationary"):
                if not np.allclose(np.array(a[key], dtype=float), np.array(b[key], dtype=float), atol=1e-12,
                                   equal_nan=True):  # fmt: skip
                    print(f"{a['table']} Z={a['population']} beta={a['beta']}: {key} differs", file=sys.stderr)
                    sys.exit(1)
        print("fixture matches")
        return
    lines = ",\n".join(json.dumps(case) for case in data["cases"])  # one case a line: small, and diffs read
    head = json.dumps({k: v for k, v in data.items() if k != "cases"})[:-1]
    OUT.write_text(f'{head}, "cases": [\n{lines}\n]}}\n')
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
