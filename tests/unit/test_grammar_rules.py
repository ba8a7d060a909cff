"""The parser's grammar compiles each rule when a reply first needs it (harness.players.model.parsing.grammar).

Compiling on first use must not hide a broken rule until a rare reply reaches it: every rule of every kind of label
set compiles here, and a grammar missing a rule is refused when it is built, not when a reply needs it.
"""

from __future__ import annotations

import re

import pytest

from harness.players.model.labels import ActionLabels
from harness.players.model.parsing.grammar import RULES, Grammar, grammar


@pytest.mark.parametrize(
    "labels",
    [ActionLabels(), ActionLabels("J", "F", (), ()), ActionLabels("Option1", "Option2", (), ())],
    ids=["C/D with words", "J/F", "long labels"],
)
def test_every_rule_compiles_and_reads_its_own_kind_of_reply(labels: ActionLabels) -> None:
    g = grammar(labels.cooperate, labels.defect, labels.cooperate_words, labels.defect_words)
    assert len(RULES) == 9
    for rule in RULES:
        assert isinstance(getattr(g, rule), re.Pattern), rule
    assert g.statements and all(isinstance(p, re.Pattern) for p in g.statements)
    # Each compiled rule is the one kept: a second look is the same object, not a second compile.
    assert all(getattr(g, rule) is getattr(g, rule) for rule in RULES) and g.statements is g.statements
    d = labels.defect
    assert g.whole.fullmatch(d) and g.whole.fullmatch(d)["tok"] == d
    assert g.final.search(f"Final answer: {d}")["value"].strip() == d
    assert g.answer_line.search(f"Answer: {d}")["value"].strip() == d
    assert g.mention.search(f"so {d}")["tok"] == d


def test_a_grammar_without_every_rule_is_refused_when_built() -> None:
    with pytest.raises(ValueError, match="missing"):
        Grammar(lookup={"c": "C", "d": "D"}, names=("C", "D"), rules={"token": ("C|D", 0)}, statements=())
