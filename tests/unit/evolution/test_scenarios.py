"""The Evolution of Trust's scenarios (the dashboard's and `pdbench evolve --scenario`'s): every scenario's lesson is
true of the run the scenario produces.

Each lesson is checked here by reading the trajectory directly (the population per generation and the payoff
table), never through the scenario's own ``shows``; the deterministic payoffs it quotes are worked out by hand
(The Evolution of Trust's payoffs: R 2, S -1, T 3, P 0), the noisy ones from an exact Markov chain of the
two strategies under noise.
"""

from __future__ import annotations

import math
from itertools import product

import numpy as np
import pytest

from harness.config.presets.payoffs import PAYOFF_PRESETS
from harness.errors import ConfigError
from harness.evolution import EvolutionSettings, Trajectory, evolve
from harness.evolution.scenarios import SCENARIOS, SCENARIOS_BY_KEY, scenario_named, scenario_of

R, S, T, P = 2.0, -1.0, 3.0, 0.0
MINE = {("C", "C"): R, ("C", "D"): S, ("D", "C"): T, ("D", "D"): P}


def _run(key: str, seed: int | None = None) -> tuple[EvolutionSettings, Trajectory]:
    settings = SCENARIOS_BY_KEY[key].settings()
    if seed is not None:
        settings = settings.model_copy(update={"seed": seed})
    return settings, evolve(settings)


def column(t: Trajectory, player: str) -> np.ndarray:
    return np.asarray(t.population)[:, t.players.index(player)]


def cell(t: Trajectory, player: str, opponent: str) -> float:
    return float(t.payoffs.values[t.players.index(player), t.players.index(opponent)])


def everyone_plays(t: Trajectory, player: str) -> bool:
    return int(column(t, player)[-1]) == t.size


# --- the payoffs the lessons quote, worked out independently ---------------------------------------


def expected_match(a: str, b: str, rounds: int, noise: float) -> tuple[float, float]:
    """Exact expected totals of a match of ``a`` against ``b`` (each TFT or ALLD or ALLC) under noise: a Markov
    chain over the moves played last round; each intended move is flipped with probability ``noise``."""

    def intends(who: str, their_last: str | None) -> str:
        if who == "ALLD":
            return "D"
        if who == "ALLC":
            return "C"
        return "C" if their_last is None else their_last  # TFT copies what the other played

    def played(intended: str) -> list[tuple[str, float]]:
        other = "D" if intended == "C" else "C"
        return [(intended, 1 - noise), (other, noise)] if noise else [(intended, 1.0)]

    states: dict[tuple[str | None, str | None], float] = {(None, None): 1.0}
    total_a = total_b = 0.0
    for _ in range(rounds):
        nxt: dict[tuple[str | None, str | None], float] = {}
        for (last_a, last_b), p in states.items():
            for (ma, pa), (mb, pb) in product(played(intends(a, last_b)), played(intends(b, last_a))):
                q = p * pa * pb
                total_a += q * MINE[(ma, mb)]
                total_b += q * MINE[(mb, ma)]
                nxt[(ma, mb)] = nxt.get((ma, mb), 0.0) + q
        states = nxt
    return total_a, total_b


def test_the_markov_chain_agrees_with_hand_worked_matches() -> None:
    assert expected_match("ALLD", "ALLC", 10, 0.0) == (30.0, -10.0)  # 10 × T, 10 × S
    assert expected_match("TFT", "ALLD", 2, 0.0) == (-1.0, 3.0)  # C/D then D/D
    assert expected_match("TFT", "TFT", 2, 0.0) == (4.0, 4.0)
    # one round, noise e on each move; TFT intends C, ALLD intends D; (TFT's move, ALLD's move):
    e = 0.2
    p_cc, p_cd, p_dc, p_dd = (1 - e) * e, (1 - e) ** 2, e * e, e * (1 - e)
    assert expected_match("TFT", "ALLD", 1, e)[0] == pytest.approx(p_cc * R + p_cd * S + p_dc * T + p_dd * P)
    assert expected_match("TFT", "ALLD", 1, e)[0] == pytest.approx(-0.2)  # .16 · 2 − .64 + .04 · 3


# --- each scenario's lesson, with its seed -------------------------------------------------------------


def test_exploited_allc_dies_out_then_tft_takes_over() -> None:
    settings, t = _run("exploited")
    allc, alld = column(t, "ALLC"), column(t, "ALLD")
    assert allc[0] == 15 and allc[-1] == 0
    assert alld.max() > alld[0]  # ALLD grew on ALLC ...
    gone = int(np.flatnonzero(allc == 0)[0])
    assert int(alld.argmax()) >= gone - 1  # ... while ALLC lasted
    assert everyone_plays(t, "TFT")
    assert (cell(t, "ALLD", "ALLC"), cell(t, "ALLC", "ALLD")) == expected_match("ALLD", "ALLC", 10, 0.0) == (30, -10)
    evidence = SCENARIOS_BY_KEY["exploited"].shows(settings, t)
    assert evidence is not None
    assert "30 points a match from ALLC, which gets -10" in evidence
    assert f"to none by generation {gone}" in evidence and f"from generation {t.fixation.generation}" in evidence


def test_few_rounds_alld_takes_over() -> None:
    settings, t = _run("few_rounds")
    assert settings.horizon.n_rounds == 2
    assert column(t, "ALLD")[0] == 6 and everyone_plays(t, "ALLD")
    assert cell(t, "ALLD", "TFT") == 3 and cell(t, "TFT", "ALLD") == -1 and cell(t, "TFT", "TFT") == 4
    assert (cell(t, "TFT", "ALLD"), cell(t, "ALLD", "TFT")) == expected_match("TFT", "ALLD", 2, 0.0)
    evidence = SCENARIOS_BY_KEY["few_rounds"].shows(settings, t)
    assert evidence is not None and "ALLD takes 3 from TFT, which gets -1, and two TFTs make only 4" in evidence


def test_noise_lets_gtft_overtake_tft() -> None:
    settings, t = _run("noise")
    assert settings.noise == 0.05
    gtft, tft = column(t, "GTFT"), column(t, "TFT")
    assert gtft[0] < tft[0] and gtft[-1] > tft[-1]
    assert cell(t, "GTFT", "GTFT") > cell(t, "TFT", "TFT")
    assert SCENARIOS_BY_KEY["noise"].shows(settings, t) is not None


def test_too_much_noise_alld_takes_over() -> None:
    settings, t = _run("too_noisy")
    assert settings.noise == 0.2 and t.payoffs.replicates == 50
    assert everyone_plays(t, "ALLD")
    # the estimated cells (50 matches of 10 rounds) against the exact expectation: within 5 standard errors
    for a, b in [("TFT", "TFT"), ("ALLD", "TFT"), ("TFT", "ALLD")]:
        exact = expected_match(a, b, 10, 0.2)[0]
        assert cell(t, a, b) == pytest.approx(exact, abs=5 * 10 * (T - S) / 2 / np.sqrt(50)), (a, b, exact)
    assert expected_match("ALLD", "TFT", 10, 0.2)[0] > expected_match("TFT", "ALLD", 10, 0.2)[0]
    assert cell(t, "ALLD", "TFT") > cell(t, "TFT", "ALLD")
    assert SCENARIOS_BY_KEY["too_noisy"].shows(settings, t) is not None


@pytest.mark.parametrize("preset", SCENARIOS, ids=lambda p: p.key)
def test_a_lesson_is_no_accident_of_its_seed(preset: object) -> None:
    """Each lesson holds for most seeds (read directly from the runs), not only for the preset's own."""
    key = preset.key  # type: ignore[attr-defined]
    holds = tft_wins = 0
    for seed in range(20):
        _, t = _run(key, seed)
        if key == "noise":
            holds += column(t, "GTFT")[-1] > column(t, "TFT")[-1]
        elif key == "exploited":
            holds += column(t, "ALLC")[-1] == 0 and everyone_plays(t, "TFT")
        elif key == "weak_selection":  # chance decides: someone takes over, TFT about half the time
            holds += t.fixation is not None
            tft_wins += everyone_plays(t, "TFT")
        elif key == "strong_selection":
            holds += everyone_plays(t, "TFT")
        else:
            holds += everyone_plays(t, "ALLD")
    assert holds >= 18, f"{preset.title}: the lesson holds for {holds} of 20 seeds"  # type: ignore[attr-defined]
    if key == "weak_selection":
        assert 4 <= tft_wins <= 16, tft_wins  # p = 0.52: outside with probability 0.3%


def moran_odds(w: float, n: int = 20, start: int = 10) -> float:
    """One TFT-or-ALLD population of the selection presets, worked out here: 10-round matches with the game's
    coins, per round TFT-TFT R = 2, TFT-ALLD (S + 9 P) / 10 = -0.1, ALLD-TFT (T + 9 P) / 10 = 0.3, ALLD-ALLD 0;
    each score the mean over the n - 1 others; exponential fitness, so g_j / f_j = exp(w (score_ALLD - score_TFT));
    fixation of TFT from ``start`` (Nowak 2006, eq. 6.13 generalised to i initial individuals)."""
    tt, ta, at, aa = R, (S + 9 * P) / 10, (T + 9 * P) / 10, P
    products = [1.0]
    for j in range(1, n):
        tft = ((j - 1) * tt + (n - j) * ta) / (n - 1)
        alld = (j * at + (n - j - 1) * aa) / (n - 1)
        products.append(products[-1] * math.exp(w * (alld - tft)))
    return sum(products[:start]) / sum(products)


def test_the_selection_presets_quote_the_exact_odds() -> None:
    weak, strong = moran_odds(0.01), moran_odds(1.0)
    assert weak == pytest.approx(0.518, abs=0.001) and strong == pytest.approx(0.989, abs=0.001)
    for key, winner in (("weak_selection", "ALLD"), ("strong_selection", "TFT")):
        settings, t = _run(key)
        assert cell(t, "TFT", "ALLD") == 10 * -0.1 and cell(t, "ALLD", "TFT") == 10 * 0.3  # the table, in totals
        evidence = SCENARIOS_BY_KEY[key].shows(settings, t)
        assert evidence is not None and f"{weak:.0%} of runs at w = 0.01" in evidence
        assert f"{strong:.0%} at w = 1" in evidence and f"{winner} took over" in evidence
    # the strong lesson is not shown for a run that ALLD won
    settings, t = _run("weak_selection")
    assert everyone_plays(t, "ALLD") and SCENARIOS_BY_KEY["strong_selection"].shows(settings, t) is None


@pytest.mark.slow
@pytest.mark.parametrize(("key", "w"), [("weak_selection", 0.01), ("strong_selection", 1.0)])
def test_the_selection_presets_fix_as_often_as_the_odds_say(key: str, w: float) -> None:
    runs = 400
    wins = sum(everyone_plays(_run(key, seed)[1], "TFT") for seed in range(runs))
    p = moran_odds(w)
    assert abs(wins / runs - p) <= 3 * math.sqrt(p * (1 - p) / runs) + 1 / runs, (wins / runs, p)


def test_a_run_that_does_not_show_the_lesson_gets_none() -> None:
    """The same mix with 10 rounds a match: TFT, not ALLD, takes over, so the few-rounds lesson is not shown."""
    preset = SCENARIOS_BY_KEY["few_rounds"]
    settings = EvolutionSettings.model_validate({**preset.data, "horizon": {"type": "fixed", "n_rounds": 10}})
    t = evolve(settings)
    assert not everyone_plays(t, "ALLD")
    assert preset.shows(settings, t) is None


def test_a_scenario_is_recognised_by_its_settings_only() -> None:
    for scenario in SCENARIOS:
        assert scenario_of(scenario.settings()) is scenario
    assert scenario_of(SCENARIOS[0].settings().model_copy(update={"seed": 1})) is None


def test_a_lesson_needs_the_scenarios_players() -> None:
    """A run whose players were changed (from the command line) is not read for a lesson about players it lacks."""
    scenario = SCENARIOS_BY_KEY["exploited"]
    settings = EvolutionSettings.model_validate({**scenario.data, "players": ["ALLD", "TFT"], "counts": [5, 5]})
    assert scenario.evidence(settings, evolve(settings)) is None


def test_trust_payoffs_are_the_games_coins() -> None:
    """Cooperating costs you 1 coin and gives the other 3 (ncase.me/trust)."""
    cost, gift = 1.0, 3.0
    trust = PAYOFF_PRESETS["trust"].to_mapping()
    assert trust["C"]["C"] == [gift - cost, gift - cost]
    assert trust["C"]["D"] == [-cost, gift]
    assert trust["D"]["C"] == [gift, -cost]
    assert trust["D"]["D"] == [0.0, 0.0]
    assert all(s.settings().payoff_matrix == PAYOFF_PRESETS["trust"] for s in SCENARIOS)


def test_an_unknown_scenario_is_one_paragraph_with_the_closest() -> None:
    assert scenario_named("Few-Rounds") is SCENARIOS_BY_KEY["few_rounds"]
    with pytest.raises(ConfigError, match=r"'exploted' is not a scenario \(did you mean exploited\?\)") as caught:
        scenario_named("exploted")
    assert "\n" not in str(caught.value) and "--scenario list" in str(caught.value)
    assert all(s.key in str(caught.value) for s in SCENARIOS)
