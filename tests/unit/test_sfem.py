"""The strategy frequency estimation (Dal Bó & Fréchette 2011): the EM's maximum checked against a general
optimiser (scipy) on the same likelihood written out here, known mixtures with a known tremble recovered
from simulated games, a random player attributed to RAND, and the counts it reads from a results file."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from harness.analysis.sfem import (
    BOOTSTRAP_STEPS,
    CHANCE_TEST,
    DETERMINISTIC,
    START_BETAS,
    STRATEGIES,
    fit_counts,
    sfem,
    sfem_by_condition,
)
from tests.support.logs import write_logs


def would(name: str, t: int, own: list[str], opp: list[str]) -> str:
    """What a classic strategy plays at round ``t`` (from 0) after the played history ``own``/``opp``."""
    if name == "ALLC":
        return "C"
    if name == "ALLD":
        return "D"
    if name in ("TFT", "STFT"):
        return opp[t - 1] if t else ("C" if name == "TFT" else "D")
    if name == "GRIM":
        return "D" if "D" in opp[:t] else "C"
    assert name == "WSLS"
    return "C" if t == 0 or own[t - 1] == opp[t - 1] else "D"


def simulate(
    mix: dict[str, float], beta: float, games: int, rounds: int, opp_coop: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Games of a player drawing a strategy from ``mix`` per game and trembling with 1 − β, against an
    opponent who cooperates with probability ``opp_coop``: the match counts and moves SFEM reads."""
    rng = np.random.default_rng(seed)
    names = list(mix)
    matches = np.zeros((games, len(DETERMINISTIC)))
    for g in range(games):
        k = names[rng.choice(len(names), p=[mix[n] for n in names])]
        own: list[str] = []
        opp: list[str] = []
        for t in range(rounds):
            if k == "RAND":
                move = "C" if rng.random() < 0.5 else "D"
            else:
                want = would(k, t, own, opp)
                move = want if rng.random() < beta else {"C": "D", "D": "C"}[want]
            own.append(move)
            opp.append("C" if rng.random() < opp_coop else "D")
        for j, d in enumerate(DETERMINISTIC):
            matches[g, j] = sum(own[t] == would(d, t, own, opp) for t in range(rounds))
    return matches, np.full(games, float(rounds))


def log_likelihood(shares: np.ndarray, beta: float, matches: np.ndarray, moves: np.ndarray) -> float:
    """Σ_games log Σ_k φ_k L_k, with L_k = β^m (1 − β)^(n − m) and RAND's ½^n, as the paper writes it."""
    n = moves[:, None]
    per_game = (shares[:-1] * beta**matches * (1 - beta) ** (n - matches)).sum(axis=1) + shares[-1] * 0.5**moves
    return float(np.log(per_game).sum())


def test_the_em_maximum_is_the_likelihoods_maximum() -> None:
    matches, moves = simulate({"TFT": 0.5, "ALLD": 0.3, "WSLS": 0.2}, 0.85, 60, 10, 0.6, seed=3)
    shares, beta, ll = fit_counts(matches, moves)
    from scipy.optimize import minimize  # here, not at the top: scipy costs every test process ~1 s to collect

    assert ll == pytest.approx(log_likelihood(shares, beta, matches, moves), abs=1e-9)

    def negative(x: np.ndarray) -> float:
        w = np.exp(x[:-1] - x[:-1].max())
        return -log_likelihood(w / w.sum(), 0.5 + 0.5 / (1 + math.exp(-x[-1])), matches, moves)

    rng = np.random.default_rng(0)
    best = min(
        (minimize(negative, rng.normal(size=len(STRATEGIES) + 1), method="Nelder-Mead") for _ in range(3)),
        key=lambda r: r.fun,
    )
    assert ll >= -best.fun - 1e-3  # no start of a general optimiser does better
    assert sum(shares) == pytest.approx(1.0)


def test_a_pure_strategy_without_trembles_is_itself() -> None:
    # TFT without error against a mixed opponent: every move matches TFT; β = 1, TFT's share 1, no error left.
    matches, moves = simulate({"TFT": 1.0}, 1.0, 30, 12, 0.5, seed=1)
    fit = sfem(matches, moves, bootstrap=20)
    assert fit.beta == pytest.approx(1.0)
    assert fit.shares[STRATEGIES.index("TFT")] == pytest.approx(1.0, abs=1e-6)
    assert fit.share_se is not None and fit.share_se[STRATEGIES.index("TFT")] < 1e-3


def test_the_bootstrap_is_reproducible() -> None:
    matches, moves = simulate({"GRIM": 0.5, "ALLC": 0.5}, 0.9, 20, 8, 0.8, seed=2)
    assert sfem(matches, moves, bootstrap=5, seed=4) == sfem(matches, moves, bootstrap=5, seed=4)


def bootstrap_one_by_one(
    matches: np.ndarray, moves: np.ndarray, bootstrap: int, seed: int
) -> tuple[list[float], float, int]:
    """The bootstrap as it ran before its resamples were stacked: :func:`fit_counts` on each resample in turn,
    from the start the bootstrap uses, with the same draws of the same seed. The standard errors of the shares
    and of β, and how many resamples were no better than chance (all RAND at β ½)."""
    rows, which = np.unique(np.column_stack([moves, matches]), axis=0, return_inverse=True)
    which = which.reshape(-1)
    row_moves, row_matches = rows[:, 0], rows[:, 1:]
    shares, beta, _ = fit_counts(row_matches, row_moves, weights=np.bincount(which).astype(float))
    uniform = np.full(len(STRATEGIES), 1.0 / len(STRATEGIES))
    start = (uniform, START_BETAS[1]) if shares[-1] == 1.0 else (0.9 * shares + 0.1 * uniform, max(beta, 0.55))
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(bootstrap):
        weights = np.bincount(which[rng.integers(0, len(moves), len(moves))], minlength=len(rows)).astype(float)
        s, b, _ = fit_counts(row_matches, row_moves, (start,), BOOTSTRAP_STEPS, weights)
        draws.append([*s, b])
    table = np.array(draws)
    errors = [float(table[:, j].std(ddof=1)) for j in range(table.shape[1])]
    return errors[:-1], errors[-1], int(np.sum(table[:, -1] == 0.5))


@dataclass(frozen=True)
class Player:
    """Simulated games (see :func:`simulate`) and what their bootstrap goes through."""

    mix: dict[str, float]
    beta: float
    games: int
    rounds: int
    opp_coop: float
    seed: int
    chance_in_some: bool = False  # the chance test decides some resamples and not others
    tie: bool = False  # ALLC, TFT and GRIM alike on every game


SLOW = pytest.mark.slow  # 20 resamples of up to 200 distinct games, fitted twice
PLAYERS = [
    pytest.param(Player({"RAND": 1.0}, 0.9, 200, 20, 0.7, 2, chance_in_some=True), id="random", marks=SLOW),
    pytest.param(Player({"TFT": 0.6, "ALLD": 0.4}, 0.9, 40, 20, 0.7, 5), id="60% TFT, 40% ALLD, trembling"),
    pytest.param(Player({"TFT": 1.0}, 0.95, 40, 10, 1.0, 1, tie=True), id="TFT against a cooperator"),
    pytest.param(
        Player({"TFT": 0.5, "RAND": 0.5}, 0.7, 20, 10, 0.5, 3, chance_in_some=True), id="TFT+RAND", marks=SLOW
    ),
    pytest.param(Player({"RAND": 1.0}, 0.9, 15, 10, 0.5, 4, chance_in_some=True), id="a coin, few games", marks=SLOW),
]


@pytest.mark.parametrize("player", PLAYERS)
def test_the_stacked_bootstrap_is_the_bootstrap_one_resample_at_a_time(player: Player) -> None:
    matches, moves = simulate(player.mix, player.beta, player.games, player.rounds, player.opp_coop, player.seed)
    fit = sfem(matches, moves, bootstrap=20, seed=7)
    share_se, beta_se, at_chance = bootstrap_one_by_one(matches, moves, 20, seed=7)
    assert fit.share_se == pytest.approx(share_se, rel=1e-9, abs=1e-12)
    assert fit.beta_se == pytest.approx(beta_se, rel=1e-9, abs=1e-12)
    assert max(share_se) > 1e-3 and beta_se > 0  # the resamples differ: the comparison is not of zeros
    assert (0 < at_chance < 20) == player.chance_in_some
    if player.tie:  # a tie the data cannot break: the three shares stay equal
        alike = [fit.shares[STRATEGIES.index(k)] for k in ("ALLC", "TFT", "GRIM")]
        assert alike == pytest.approx([alike[0]] * 3) and alike[0] > 0.2


def _within_two_se(fit_shares: tuple[float, ...], se: tuple[float, ...], mix: dict[str, float]) -> list[str]:
    return [
        f"{name}: {s:.3f} ± {e:.3f}, true {mix.get(name, 0.0)}"
        for name, s, e in zip(STRATEGIES, fit_shares, se, strict=True)
        if abs(s - mix.get(name, 0.0)) > 2 * e + 1e-6
    ]


@pytest.mark.slow
def test_a_known_mixture_and_its_tremble_are_recovered() -> None:
    mix = {"TFT": 0.4, "ALLD": 0.3, "GRIM": 0.3}
    matches, moves = simulate(mix, 0.9, 300, 20, 0.7, seed=0)
    fit = sfem(matches, moves, bootstrap=100)
    assert fit.share_se is not None and fit.beta_se is not None
    assert _within_two_se(fit.shares, fit.share_se, mix) == []
    assert abs(fit.beta - 0.9) <= 2 * fit.beta_se
    assert fit.beta_se < 0.01 and max(fit.share_se) < 0.05  # and the errors are small enough to mean it


@pytest.mark.slow
def test_a_random_player_is_attributed_to_rand() -> None:
    matches, moves = simulate({"RAND": 1.0}, 0.9, 200, 20, 0.7, seed=2)
    fit = sfem(matches, moves, bootstrap=40)
    assert fit.share_se is not None
    rand = fit.shares[-1]
    assert rand == max(fit.shares) and rand > 0.9
    assert _within_two_se(fit.shares, fit.share_se, {"RAND": 1.0}) == []


def test_the_counts_come_from_the_results_file(results: Path) -> None:
    # Seat A plays TFT without error in three games (C, then B's previous move); seat B mostly D. Complete
    # games of one condition, "hand".
    games = [("CDDC", "DDCD"), ("CCDD", "CDDD"), ("CDCD", "DCDC")]
    with write_logs(results, "sfem", games) as cat:
        per_seat = {f.seat: f for f in sfem_by_condition(cat, "sfem", bootstrap=10)}
        pooled = sfem_by_condition(cat, "sfem", pooled=True, bootstrap=10)
        only_tft = sfem_by_condition(cat, "sfem", pooled=True, bootstrap=10, players={"TFT"})
    assert only_tft == [p for p in pooled if p.player_name == "TFT"]  # the players named, each fitted as with all
    a = per_seat["a"]
    assert (a.player_name, a.condition, a.fit.games) == ("TFT", "hand", 3)
    assert a.fit.shares[STRATEGIES.index("TFT")] == pytest.approx(1.0, abs=1e-6) and a.fit.beta == pytest.approx(1.0)
    # B's fit is the maximum for the counts of its logs taken here, move by move, not from the view.
    b = per_seat["b"]
    want = simulate_counts([("DDCD", "CDDC"), ("CDDD", "CCDD"), ("DCDC", "CDCD")])
    shares, beta, _ = fit_counts(*want)
    assert b.fit.shares == pytest.approx(tuple(shares)) and b.fit.beta == pytest.approx(beta)
    assert [p.player_name for p in pooled] == ["ALLD", "TFT"] and {p.condition for p in pooled} == {None}


def simulate_counts(games: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
    """The match counts of played logs (own, opponent), by :func:`would`."""
    matches = np.array(
        [
            [sum(own[t] == would(d, t, list(own), list(opp)) for t in range(len(own))) for d in DETERMINISTIC]
            for own, opp in games
        ],
        dtype=float,
    )
    return matches, np.array([float(len(own)) for own, _ in games])


def test_a_fit_no_better_than_chance_is_rand() -> None:
    from scipy.stats import chi2  # here, not at the top: scipy costs every test process ~1 s to collect

    assert chi2.ppf(0.95, 7) == pytest.approx(CHANCE_TEST, rel=1e-12)
    # 27 games of a coin (few, as an eval's): the bare maximum is some strategy at β just above ½; the fit
    # does not beat chance by the likelihood-ratio test, so it is RAND's, β ½.
    matches, moves = simulate({"RAND": 1.0}, 0.9, 27, 20, 0.5, seed=11)
    shares, beta, ll = fit_counts(matches, moves)
    assert tuple(shares) == (0, 0, 0, 0, 0, 0, 1) and beta == 0.5
    assert ll == pytest.approx(27 * 20 * math.log(0.5))
    # One TFT game of 20 moves without error beats chance by far (2 × 20 log 2 = 27.7 > 14.07).
    tft, n = simulate({"TFT": 1.0}, 1.0, 1, 20, 0.5, seed=1)
    assert fit_counts(tft, n)[0][STRATEGIES.index("TFT")] == pytest.approx(1.0, abs=1e-6)
