"""The memory-one profile: the ``memory_one`` view on hand-worked games (noise flips and fallbacks included), the
pooled ratio estimate's interval over games against the sandwich formula at the transition level and scipy's
Wilson interval, its coverage by simulation (where a Wilson interval on pooled transitions falls short), and the
profiles of strategies with known vectors measured from games played through the real pipeline."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from rich.cells import cell_len

from harness.analysis.compare import MEMORY_ONE, compare, resolve_players
from harness.analysis.memory_one import FOUR, Outcome, memory_one_profiles, pooled_rate, ratio_difference, wilson
from harness.analysis.stats import t_quantile
from harness.analysis.zero_determinant import ZdKind
from harness.store.catalog import Catalog
from tests.support.cli import pdbench
from tests.support.logs import write_logs

COUNTS = ("first_n", "first_c", "n_cc", "c_cc", "n_cd", "c_cd", "n_dc", "c_dc", "n_dd", "c_dd")


def test_the_view_counts_choices_after_each_outcome_as_the_player_saw_it(results: Path) -> None:
    games = [
        # A: C C D D C / B: C D D C D (nothing flipped or flagged)
        ("CCDDC", "CDDCD"),
        # A chose C (played D: noise), C, a fallback D, D (played C: noise); B: D D C C
        ("cCXd", "DDCC"),
    ]
    with write_logs(results, "hand", games) as cat:
        rows = {(r["game_id"], r["player"]): r for r in cat.records("SELECT * FROM memory_one WHERE run_id = 'hand'")}
    want = {
        # A: round 1 C; CC -> C (r2), CD -> D (r3), DD -> D (r4), DC -> C (r5)
        (0, "a"): (1, 1, 1, 1, 1, 0, 1, 1, 1, 0),
        # B (own move first): round 1 C; CC -> D, DC -> D, DD -> C, CD -> D
        (0, "b"): (1, 1, 1, 0, 1, 0, 1, 0, 1, 1),
        # A: chose C in round 1 (noise played D); r2 after (D, D) as played -> chose C; r3 a fallback: left out;
        # r4 after (D, C) (its fallback D as played, B's C) -> chose D
        (1, "a"): (1, 1, 0, 0, 0, 0, 1, 0, 1, 1),
        # B: D first; r2 after (D, D) -> D; r3 after (D, C) -> C; r4 after (C, D) -> C
        (1, "b"): (1, 0, 0, 0, 1, 1, 1, 1, 1, 0),
    }
    assert {k: tuple(rows[k][c] for c in COUNTS) for k in want} == want
    assert rows[(0, "a")]["p_cc"] == 1.0 and rows[(0, "a")]["p_cd"] == 0.0 and rows[(1, "a")]["p_cc"] is None


def _sandwich(games: list[tuple[int, int]]) -> tuple[float, float]:
    """The ratio and its CR1 cluster-robust variance from transition-level data: the intercept of a regression of
    each transition's 0/1 response on 1, with the sandwich (X'X)^-1 (sum_g X_g' u_g u_g' X_g) (X'X)^-1."""
    y = np.concatenate([np.r_[np.ones(c), np.zeros(n - c)] for c, n in games if n > 0])
    cluster = np.concatenate([np.full(n, g) for g, (_, n) in enumerate(games) if n > 0])
    x = np.ones((len(y), 1))
    bread = np.linalg.inv(x.T @ x)
    beta = bread @ x.T @ y
    u = y - x @ beta
    meat = sum(np.outer(x[cluster == g].T @ u[cluster == g], x[cluster == g].T @ u[cluster == g])
               for g in np.unique(cluster))  # fmt: skip
    groups = len(np.unique(cluster))
    return float(beta[0]), float((bread @ meat @ bread)[0, 0]) * groups / (groups - 1)


def test_the_interval_is_wilsons_at_the_effective_transitions_with_t_on_games() -> None:
    games = [(3, 10), (9, 10), (1, 4), (0, 0), (5, 6)]
    r, v = _sandwich(games)
    got = pooled_rate(games)
    assert got.mean == pytest.approx(18 / 30) and got.mean == pytest.approx(r) and got.n == 4
    n_eff = r * (1 - r) / v
    assert n_eff < 30  # these games disagree: fewer effective transitions than counted
    assert (got.low, got.high) == pytest.approx(wilson(r, n_eff, t_quantile(0.975, 3)))
    # Wilson's formula itself, at a whole n and the normal quantile, is scipy's.
    ci = scipy.stats.binomtest(7, 20).proportion_ci(method="wilson")
    assert wilson(0.35, 20, float(scipy.stats.norm.ppf(0.975))) == pytest.approx((ci.low, ci.high))


def test_a_deterministic_player_gets_an_interval_from_its_transitions_and_one_game_none() -> None:
    # Every game chose C every time: v = 0, so n_eff is the 500 transitions counted (not a zero-width interval).
    got = pooled_rate([(50, 50)] * 10)
    assert got.mean == 1.0 and got.high == 1.0
    assert got.low == pytest.approx(wilson(1.0, 500, t_quantile(0.975, 9))[0]) and 0.98 < got.low < 1.0  # type: ignore[operator]
    one = pooled_rate([(3, 7)])
    assert one.mean == pytest.approx(3 / 7) and one.low is None and one.n == 1
    assert pooled_rate([(0, 0)]).mean is None


def test_coverage_over_games_holds_where_a_pooled_wilson_interval_falls_short() -> None:
    # 15 games, each with its own propensity (Beta(3, 7), mean 0.3) and 5 to 60 transitions: rounds within a game
    # are alike, so pooled transitions overstate the evidence.
    rng = np.random.default_rng(20261129)
    hits = naive = 0
    reps = 1000
    z = float(scipy.stats.norm.ppf(0.975))
    for _ in range(reps):
        n = rng.integers(5, 61, size=15)
        c = rng.binomial(n, rng.beta(3, 7, size=15))
        est = pooled_rate(list(zip(c.tolist(), n.tolist(), strict=True)))
        hits += est.low <= 0.3 <= est.high  # type: ignore[operator]
        low, high = wilson(c.sum() / n.sum(), float(n.sum()), z)
        naive += low <= 0.3 <= high
    assert 0.92 <= hits / reps <= 0.98
    assert naive / reps < 0.85


VALIDATION = """
run: {run_id: known, seed: 20261129}
horizon: {type: fixed, n_rounds: 100}
noise: {prob: 0.1}
experiment:
  replicates: 20
  conditions:
    - {name: TFT, agent_a: {policy: TFT}, agent_b: {policy: RAND}}
    - {name: WSLS, agent_a: {policy: WSLS}, agent_b: {policy: RAND}}
    - {name: GTFT, agent_a: {policy: GTFT, generous_prob: 0.25}, agent_b: {policy: RAND}}
    - {name: EXTORT2, agent_a: {policy: EXTORT2}, agent_b: {policy: RAND}}
    - {name: ALLC, agent_a: {policy: ALLC}, agent_b: {policy: RAND}}
    - {name: ALLD, agent_a: {policy: ALLD}, agent_b: {policy: RAND}}
"""
# The donation game with b = 4, c = 1 (R, S, T, P) = (3, -1, 4, 0): T + S = R + P, where GTFT is generous ZD.
DONATION = """
run: {run_id: donation, seed: 7}
game:
  payoff_matrix: {C: {C: [3, 3], D: [-1, 4]}, D: {C: [4, -1], D: [0, 0]}}
horizon: {type: fixed, n_rounds: 100}
noise: {prob: 0.1}
experiment:
  replicates: 20
  conditions:
    - {name: GTFT, agent_a: {policy: GTFT, generous_prob: 0.3333333333333333}, agent_b: {policy: RAND}}
"""
KNOWN = {
    "TFT": (1, 0, 1, 0),
    "WSLS": (1, 0, 0, 1),
    "GTFT": (1, 0.25, 1, 0.25),
    "EXTORT2": (8 / 9, 1 / 2, 1 / 3, 0),
    "ALLC": (1, 1, 1, 1),
    "ALLD": (0, 0, 0, 0),
}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Strategies with known vectors against RAND, with execution noise 0.1 so that every outcome comes about (ALLC
    plays D only when noise flips its move), played by ``pdbench run``."""
    results = tmp_path_factory.mktemp("memory_one") / "results"
    for name, text in (("known", VALIDATION), ("donation", DONATION)):
        config = results.parent / f"{name}.yaml"
        config.write_text(text)
        code, _out, err = pdbench("run", config, "--results", results)
        assert code == 0, err
    return results


@pytest.mark.slow
def test_known_vectors_lie_within_the_measured_intervals(played: Path) -> None:
    with Catalog(played) as cat:
        profiles = {p.label: p for p in memory_one_profiles(cat, "known")}
    for name, vector in KNOWN.items():
        profile = profiles[name]
        assert profile.games == 20
        first = profile.rates[Outcome.FIRST]
        assert first.mean == (0.0 if name == "ALLD" else 1.0)
        for outcome, p in zip(FOUR, vector, strict=True):
            e = profile.rates[outcome]
            assert e.low is not None and e.high is not None and e.n >= 2, (name, outcome)
            assert e.low <= p <= e.high, (name, outcome, e)
    # The stochastic entries are estimated, not read from a rule: the intervals have width.
    gtft = profiles["GTFT"].rates[Outcome.CD]
    assert gtft.high - gtft.low > 0.05  # type: ignore[operator]


@pytest.mark.slow
def test_the_zd_test_on_the_strategies_with_known_vectors(played: Path) -> None:
    with Catalog(played) as cat:
        profiles = {p.label: p for p in memory_one_profiles(cat, "known")}
        donation = memory_one_profiles(cat, "donation", labels=["GTFT"])[0]
    extort = profiles["EXTORT2"].zd()
    assert extort.kind is ZdKind.EXTORTIONATE and extort.chi_range is not None
    assert extort.chi_range[0] <= 2.0 <= extort.chi_range[1] and extort.chi == pytest.approx(2.0, abs=0.5)
    assert profiles["TFT"].zd().kind is ZdKind.FAIR and profiles["TFT"].zd().chi == pytest.approx(1.0)
    for name in ("WSLS", "ALLC", "ALLD", "GTFT"):  # GTFT(0.25) at 3-0-5-1: w . p~ = g != 0
        assert profiles[name].zd().kind is ZdKind.NOT_ZD, name
    generous = donation.zd()
    assert generous.kind is ZdKind.GENEROUS and generous.chi_range is not None
    assert generous.chi_range[0] <= 2.0 <= generous.chi_range[1]


def test_a_difference_of_pooled_rates_with_equal_transitions_per_game_is_welchs_t_test() -> None:
    # With n transitions in every game the pooled ratio is the mean of the per-game rates and its CR1 variance is
    # their sample variance over G: the difference is then Welch's t test on the per-game rates.
    first = [(3, 10), (5, 10), (4, 10), (8, 10)]
    second = [(9, 10), (7, 10), (10, 10), (6, 10), (8, 10)]
    got = ratio_difference(first, second)
    ref = scipy.stats.ttest_ind([c / 10 for c, _ in second], [c / 10 for c, _ in first], equal_var=False)
    ci = ref.confidence_interval()
    assert (got.mean, got.low, got.high, got.p) == pytest.approx((0.8 - 0.5, ci.low, ci.high, ref.pvalue))
    assert got.test == "ratio" and got.n == (4, 5)


@pytest.mark.slow
def test_report_and_compare_show_the_profile_within_80_columns(played: Path) -> None:
    code, out, err = pdbench("report", "known", "--results", played, "--width", "80")
    assert code == 0, err
    assert "Memory-one profile per player, run known" in out and "P(C|DD)" in out
    assert "ZD test, EXTORT2: extortionate, chi" in out and "ZD test, TFT: fair, chi 1.00" in out
    assert "ZD test, WSLS: not ZD" in out
    assert max(cell_len(line) for line in out.splitlines()) <= 80
    wide = pdbench("report", "known", "--results", played, "--width", "160")[1]
    assert "after CC" in wide and max(cell_len(line) for line in wide.splitlines()) <= 160


@pytest.mark.slow
def test_compare_shows_memory_one_rates_as_the_report_pools_them(tmp_path: Path) -> None:
    results = tmp_path / "results"
    for model, run_id in (("mock/tft", "m_tft"), ("mock/defector", "m_alld")):
        code, _out, err = pdbench("eval", "--model", model, "--opponents", "RAND", "--rounds", "20",
                                  "--replicates", "3", "--results", results, "--run-id", run_id)  # fmt: skip
        assert code == 0, err
    with Catalog(results) as cat:
        players = resolve_players(cat, ["m_tft", "m_alld"], {"m_tft": ["m_tft"], "m_alld": ["m_alld"]})
        c = compare(cat, players)
        pooled = {p.label: p for p in memory_one_profiles(cat, "m_tft") + memory_one_profiles(cat, "m_alld")}
    for metric, outcome in MEMORY_ONE.items():
        tft, alld = c.overall[metric]
        assert tft.estimate == pooled["mock/tft"].rates[outcome]
        assert alld.estimate == pooled["mock/defector"].rates[outcome]
    # TFT answers RAND's last move: P(C|CC) = P(C|DC) = 1, P(C|CD) = P(C|DD) = 0; the defector never cooperates.
    assert [c.overall[m][0].estimate.mean for m in MEMORY_ONE] == [1.0, 1.0, 0.0, 1.0, 0.0]
    assert c.overall["p_c_cc"][1].estimate.mean is None  # the defector never saw CC
    assert c.overall["p_c_dc"][1].difference is not None and c.overall["p_c_dc"][1].difference.mean == -1.0
    code, out, err = pdbench("compare", "m_tft", "m_alld", "--results", results, "--width", "80")
    assert code == 0, err
    assert "P(C|DD)" in out and max(cell_len(line) for line in out.splitlines()) <= 80
