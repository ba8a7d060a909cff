"""The names users bring: The Evolution of Trust's characters and the Axelrod library's classes, accepted
where their rules are exactly a PDBench strategy's, wherever a strategy is named; "did you mean" for a name
that is none; RAND's one parameter name ``p`` (its former name ``coop_prob`` read with a warning)."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.config import parse_experiment
from harness.config.presets.players import check_players, parse_players
from harness.errors import ConfigError
from harness.evolution import EvolutionSettings
from harness.game.rules import PayoffMatrix
from harness.players.strategies import STRATEGIES, make_spec, parse_spec
from harness.players.strategies.registry import ALIASES, aliases_of, canonical_name
from tests.support.cli import pdbench

# The Evolution of Trust's characters as its code plays them (ncase/trust, js/sims/PD.js), written here
# from that code: each is told both moves as played (mistakes included) after every round.
Reference = Callable[[list[str], list[str]], str]


def copycat(own: list[str], opp: list[str]) -> str:  # Logic_tft
    return opp[-1] if opp else "C"


def copykitten(own: list[str], opp: list[str]) -> str:  # Logic_tf2t: cheats after two cheats in a row
    cheated = 0
    for move in opp:
        cheated = cheated + 1 if move == "D" else 0
    return "D" if cheated >= 2 else "C"


def grudger(own: list[str], opp: list[str]) -> str:  # Logic_grudge
    return "D" if "D" in opp else "C"


def simpleton(own: list[str], opp: list[str]) -> str:  # Logic_pavlov: its own last move, switched after a cheat
    if not own:
        return "C"
    return own[-1] if opp[-1] == "C" else ("D" if own[-1] == "C" else "C")


def duel(a: dict[str, object], b: dict[str, object]) -> dict[str, object]:
    return {"experiment": {"conditions": [{"agent_a": a, "agent_b": b}]}}


TRUST: dict[str, tuple[str, Reference]] = {
    "Copycat": ("TFT", copycat),
    "Copykitten": ("TF2T", copykitten),
    "Grudger": ("GRIM", grudger),
    "Simpleton": ("WSLS", simpleton),
    "Always Cheat": ("ALLD", lambda own, opp: "D"),
    "Cheater": ("ALLD", lambda own, opp: "D"),
    "Always Cooperate": ("ALLC", lambda own, opp: "C"),
    "Cooperator": ("ALLC", lambda own, opp: "C"),
}


@pytest.mark.parametrize("alias", list(TRUST))
def test_each_trust_alias_plays_its_characters_moves(alias: str) -> None:
    name, reference = TRUST[alias]
    assert canonical_name(alias) == name
    rng = random.Random(alias)
    for _ in range(200):  # any played histories: with noise, a move as played need not be the one chosen
        own = [rng.choice("CD") for _ in range(12)]
        opp = [rng.choice("CD") for _ in range(12)]
        strategy = make_spec(alias).build(PayoffMatrix(), random.Random(0))
        for t in range(len(own) + 1):
            assert strategy.move(own[:t], opp[:t]) == reference(own[:t], opp[:t]), (alias, own[:t], opp[:t])


def test_random_is_the_same_coin_in_both_references() -> None:
    # Logic_random cooperates when Math.random() > 0.5; the Axelrod library's Random has p = 0.5: RAND's default.
    assert canonical_name("Random") == "RAND" and make_spec("Random").params.p == 0.5  # type: ignore[attr-defined]


def test_detective_is_not_an_alias() -> None:
    # Detective (Logic_prober: C, D, C, C, then TFT if the other cheated in rounds 1-3, else always D) is not
    # PROBER (Axelrod's Prober: D, C, C, ...); and the Axelrod library's Detective reads rounds 1-4 instead.
    assert canonical_name("Detective") is None


def test_axelrod_names_are_the_classes_the_fixture_checks_move_for_move() -> None:
    # tests/unit/test_axelrod_fixture.py plays each axelrod_name against PDBench's strategy.
    for name, cls in STRATEGIES.items():
        if cls.axelrod_name:
            assert canonical_name(cls.axelrod_name) == name
    for axelrod in ("TitForTat", "Tit For Tat", "titfortat", "TitFor2Tats", "WinStayLoseShift", "Defector"):
        assert canonical_name(axelrod) is not None


def test_every_name_names_one_strategy() -> None:
    for alias, name in ALIASES.items():
        assert canonical_name(alias) == name
    for name in STRATEGIES:
        assert canonical_name(name) == name and canonical_name(name.lower()) == name
        assert name not in aliases_of(name)
    assert aliases_of("TFT") == ["Copycat"]  # TitForTat is its display name's spelling
    assert aliases_of("ALLD") == ["Always Cheat", "Cheater", "Defector"]


def test_aliases_are_accepted_in_configs_and_play_as_their_strategy() -> None:
    config = parse_experiment(duel({"policy": "Copycat"}, {"policy": "Always Cheat"}))
    cond = config.experiment.conditions[0]
    assert cond.name == "TFT_vs_ALLD"  # the same condition, and so the same seeds, as TFT against ALLD
    assert config.resolved_dict()["experiment"]["conditions"][0]["agent_a"] == {"policy": "TFT"}


def test_aliases_are_accepted_as_opponents_players_and_in_evolve() -> None:
    assert parse_players("Copycat, TitFor2Tats,Simpleton , mock/tft") == ["TFT", "TF2T", "WSLS", "mock/tft"]
    with pytest.raises(ConfigError, match="lists a strategy twice"):
        check_players(parse_players("TFT,Copycat"), option="--players", models=True)
    settings = EvolutionSettings(players=["Copycat", "Always Cheat", "RAND(p=0.7)"], counts=[1, 1, 1])
    assert settings.players == ["TFT", "ALLD", "RAND(p=0.7)"]
    assert parse_spec("Grudger") == make_spec("GRIM")


def test_unknown_names_get_did_you_mean_everywhere() -> None:
    with pytest.raises(ConfigError) as info:
        check_players(["Copykat"], option="--opponents", models=False)
    assert str(info.value).startswith("--opponents: unknown strategy 'Copykat' (did you mean Copycat or Copykitten?);")
    with pytest.raises(ConfigError) as info:
        parse_experiment(
            {"experiment": {"conditions": [{"agent_a": {"policy": "Gruger"}, "agent_b": {"policy": "TFT"}}]}}
        )
    assert "agent_a.policy: unknown strategy 'Gruger' (did you mean Grudger?)" in str(info.value)
    with pytest.raises(ConfigError) as info:
        EvolutionSettings(players=["Simpelton", "ALLD"], counts=[1, 1])
    assert "unknown strategy 'Simpelton' (did you mean Simpleton?)" in str(info.value)


def test_rand_has_one_parameter_p_and_reads_its_former_name_with_a_warning() -> None:
    old = parse_experiment(
        {
            "experiment": {
                "conditions": [{"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "RAND", "coop_prob": 0.9}}]
            }
        }
    )
    new = parse_experiment(
        {"experiment": {"conditions": [{"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "RAND", "p": 0.9}}]}}
    )
    assert old.experiment.conditions[0].name == new.experiment.conditions[0].name == "TFT_vs_RAND(p=0.9)"
    assert old.resolved_dict() == new.resolved_dict()
    assert old.resolved_dict()["experiment"]["conditions"][0]["agent_b"] == {"policy": "RAND", "p": 0.9}
    assert old.warnings() == [
        "experiment.conditions[0].agent_b: coop_prob is RAND's former name for p: read as p: 0.9; write p"
    ]
    assert new.warnings() == []
    with pytest.raises(ConfigError, match="RAND is given both p and coop_prob, its former name: give p alone"):
        make_spec("RAND", {"p": 0.1, "coop_prob": 0.2})


def test_strategies_lists_the_aliases_and_p(tmp_path: Path) -> None:
    code, out, err = pdbench("strategies")
    assert code == 0, err
    text = " ".join(out.split())
    for alias in ("Copycat", "Copykitten", "Simpleton", "Cheater", "Grudger", "Defector", "Cooperator"):
        assert alias in text
    assert "p=0.5" in text and "coop_prob" not in text
