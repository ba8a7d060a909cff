"""The move parser against a hand-labelled corpus of replies (tests/unit/parse_corpus.yaml).

Each entry is a reply a model might give and the move it chose (C, D) or ``refuse`` when it
chose none. Three figures matter, in this order: opposite reads (the parser reads C where the
model chose D, or the reverse) must be 0, because an opposite read silently corrupts every
metric; accepted answers among those that choose nothing must be 0, because a guessed move is
no better; and agreement (entries read exactly as labelled, a refused clear answer counting as
a disagreement because it costs a re-ask) must be at least 97%.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from harness.players.model.parsing import policy as parsing
from harness.players.model.parsing.decisions import InvalidStructure, answer_part, find_decisions, whole_reply
from harness.players.model.parsing.grammar import JUNK, normalize
from harness.players.model.parsing.policy import ActionLabels, parse_action

CORPUS = Path(__file__).with_name("parse_corpus.yaml")
LABELS = {"CD": ActionLabels(), "JF": ActionLabels(cooperate="J", defect="F")}
CATEGORIES = {
    "bare", "markdown", "json", "xml", "answer_line", "statement", "reasoning", "self_correction",
    "hypothetical", "ambiguous", "neutral", "spanish", "french", "german", "portuguese", "chinese", "hard",
}  # fmt: skip
MIN_SIZE = 300
MIN_AGREEMENT = 0.97


@dataclass(frozen=True)
class Entry:
    cat: str
    text: str
    expect: str  # "C", "D" or "refuse"
    labels: str  # "CD" or "JF"


@dataclass(frozen=True)
class Misread:
    entry: Entry
    got: str  # "C", "D" or "refuse"
    method: str | None
    reason: str | None

    @property
    def kind(self) -> str:
        if self.entry.expect == "refuse":
            return "ACCEPTED AMBIGUOUS"
        return "refused a clear answer" if self.got == "refuse" else "OPPOSITE READ"

    def __str__(self) -> str:
        how = f"read {self.got}"
        how += f" by {self.method}" if self.method else ""
        how += f" ({self.reason})" if self.reason else ""
        where = f"[{self.entry.cat}, labels {self.entry.labels}]"
        return f"{self.kind}: {where} expected {self.entry.expect}, {how}: {self.entry.text!r}"


def load_corpus() -> list[Entry]:
    raw = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    return [Entry(e["cat"], e["text"], e["expect"], e.get("labels", "CD")) for e in raw]


@pytest.fixture(scope="module")
def corpus() -> list[Entry]:
    return load_corpus()


def test_corpus_is_well_formed(corpus: list[Entry]) -> None:
    assert len(corpus) >= MIN_SIZE
    assert {e.cat for e in corpus} == CATEGORIES
    assert all(e.expect in ("C", "D", "refuse") for e in corpus)
    assert all(e.labels in LABELS for e in corpus)
    assert all(isinstance(e.text, str) for e in corpus)
    duplicates = [key for key, n in Counter((e.text, e.labels) for e in corpus).items() if n > 1]
    assert not duplicates, duplicates
    by_expect = Counter(e.expect for e in corpus)
    assert min(by_expect.values()) >= 40, by_expect  # enough of each outcome to mean something
    assert sum(e.labels == "JF" for e in corpus) >= 30


def read_corpus(corpus: list[Entry]) -> list[Misread]:
    misreads = []
    for entry in corpus:
        result = parse_action(entry.text, LABELS[entry.labels])
        got = result.action or "refuse"
        assert (result.action is None) == (result.reason is not None), (entry, result)
        if got != entry.expect:
            misreads.append(Misread(entry, got, result.method, result.reason))
    return misreads


def test_parser_reads_the_corpus(corpus: list[Entry]) -> None:
    misreads = read_corpus(corpus)
    report = "\n".join(str(m) for m in misreads)
    opposite = [m for m in misreads if m.kind == "OPPOSITE READ"]
    accepted = [m for m in misreads if m.kind == "ACCEPTED AMBIGUOUS"]
    agreement = 1 - len(misreads) / len(corpus)
    summary = (
        f"{len(corpus)} entries, agreement {agreement:.1%}, {len(opposite)} opposite reads, "
        f"{len(accepted)} accepted ambiguous"
    )
    assert not opposite, f"{summary}\n{report}"
    assert not accepted, f"{summary}\n{report}"
    assert agreement >= MIN_AGREEMENT, f"{summary}\n{report}"


def test_misreads_are_reported_entry_by_entry() -> None:
    """The failure message names each misread entry, what was expected and what was read."""
    entries = [
        Entry("bare", "C", "D", "CD"),  # deliberately mislabelled: an opposite read
        Entry("ambiguous", "D", "refuse", "CD"),
        Entry("statement", "C or D", "C", "CD"),
    ]
    lines = [str(m) for m in read_corpus(entries)]
    assert lines == [
        "OPPOSITE READ: [bare, labels CD] expected D, read C by bare: 'C'",
        "ACCEPTED AMBIGUOUS: [ambiguous, labels CD] expected refuse, read D by bare: 'D'",
        "refused a clear answer: [statement, labels CD] expected C, read refuse "
        "(the reply mentions both C and D but never says which one you play): 'C or D'",
    ]


def test_the_shortcut_reads_as_the_general_rules_do(corpus: list[Entry]) -> None:
    """whole_reply reads short replies without rules 3 to 6; on every corpus reply it takes, it
    must give the move those rules give."""
    taken = 0
    for entry in corpus:
        if not entry.text.strip(JUNK):
            continue
        g = parsing._grammar(LABELS[entry.labels])
        t = answer_part(normalize(entry.text))
        try:
            quick = whole_reply(t, g)
            if quick is None:
                continue
            general = parsing._resolve(find_decisions(t, g), t, g)
        except InvalidStructure:
            continue
        taken += 1
        assert general.action == quick.move, (entry, quick, general)
    assert taken >= 100
