"""PDBench's classic strategies play exactly as the Axelrod library's do.

``tests/fixtures/axelrod_matches.json`` was written by ``tests/axelrod_reference/generate_fixture.py``
with axelrod 4.14: every pair (self-play included) of the deterministic strategies, 200 rounds,
default payoffs. Here PDBench plays the same pairs and must match move for move and point for point.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from harness.game.match import Match
from harness.game.rules import PayoffMatrix
from harness.players.strategies import STRATEGIES, make_spec
from harness.players.strategies.play import play_strategies

FIXTURE = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "axelrod_matches.json").read_text())
MATCHES = FIXTURE["matches"]


def test_fixture_covers_every_deterministic_strategy_with_an_axelrod_twin() -> None:
    twins = {n for n, cls in STRATEGIES.items() if cls.axelrod_name and not cls.stochastic}
    assert set(FIXTURE["strategies"]) == twins
    for name, axl in FIXTURE["strategies"].items():
        assert STRATEGIES[name].axelrod_name == axl
    n = len(twins)
    assert len(MATCHES) == n * (n + 1) // 2


@pytest.mark.parametrize("m", MATCHES, ids=[f"{m['a']}-{m['b']}" for m in MATCHES])
def test_same_moves_and_scores_as_axelrod(m: dict) -> None:
    g = FIXTURE["game"]
    game = PayoffMatrix.from_rstp(R=g["R"], S=g["S"], T=g["T"], P=g["P"])
    match = Match(game, 0.0, random.Random(0))
    a = make_spec(m["a"]).build(game, random.Random(1))
    b = make_spec(m["b"]).build(game, random.Random(2))
    play_strategies(match, a, b, FIXTURE["turns"])
    assert "".join(match.moves_a) == m["moves_a"]
    assert "".join(match.moves_b) == m["moves_b"]
    assert (match.score_a, match.score_b) == (m["score_a"], m["score_b"])
