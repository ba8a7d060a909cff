"""The move parser against a hand-labelled corpus of replies (tests/unit/parse_corpus.yaml).

Each entry is a reply a model might give and the move it chose (C, D) or ``refuse`` when it
chose none. Three figures matter, in this order: opposite reads (the parser reads C where the
model chose D, or the reverse) must be 0, because an opposite read silently corrupts every
metric; accepted answers among those that choose nothing must be 0, because a guessed move is
no better; and agreement (entries read exactly as labelled, a refused clear answer counting as
a disagreement because it costs a re-ask) must be at least 97%. A failure prints the figures per
category (tests/benchmarks/parse_corpus_report.py, which reads any corpus of this format) and every
misread entry.

The rules were tuned on this corpus, so its figures say what the parser reads, not how well it
generalizes: that is measured on corpora written apart from the rules, with the same script.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from harness.players.model.labels import ActionLabels
from harness.players.model.parsing import policy as parsing
from harness.players.model.parsing.decisions import InvalidStructure, answer_part, find_decisions, whole_reply
from harness.players.model.parsing.doubt import doubts_answer
from harness.players.model.parsing.fields import lines_doubt
from harness.players.model.parsing.grammar import JUNK, normalize
from harness.players.model.parsing.policy import parse_action
from tests.benchmarks import parse_corpus_report

CORPUS = Path(__file__).with_name("parse_corpus.yaml")
SHAPES = Path(__file__).with_name("parse_shapes.yaml")
LABELS = {"CD": ActionLabels(), "JF": ActionLabels(cooperate="J", defect="F")}
CATEGORIES = {
    "bare", "markdown", "json", "xml", "answer_line", "statement", "reasoning", "self_correction",
    "hypothetical", "ambiguous", "neutral", "spanish", "french", "german", "portuguese", "chinese", "hard",
    # the shapes of issue 21
    "informal", "negation", "key_value", "arrow_label", "draft_revision", "history_quote", "jf_words", "option_text",
    "future_plan", "hedge", "italian", "dutch", "russian", "japanese", "korean", "hindi", "arabic",
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
        result = parse_action(entry.text, LABELS[entry.labels], parse_corpus_report.PAYOFFS[entry.labels])
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
    by_cat, _ = parse_corpus_report.report(yaml.safe_load(CORPUS.read_text(encoding="utf-8")))
    table = "\n".join([parse_corpus_report.HEADER, *(by_cat[c].row(c) for c in sorted(by_cat))])
    summary = (
        f"{len(corpus)} entries, agreement {agreement:.1%}, {len(opposite)} opposite reads, "
        f"{len(accepted)} accepted ambiguous\n{table}"
    )
    assert not opposite, f"{summary}\n{report}"
    assert not accepted, f"{summary}\n{report}"
    assert agreement >= MIN_AGREEMENT, f"{summary}\n{report}"


def test_parser_reads_the_shapes_written_before_the_second_pass() -> None:
    """tests/unit/parse_shapes.yaml: replies by shape, written before issue 21's second pass was tuned, to see
    whether a rule generalizes beyond the sentences it was written for. The same three figures matter."""
    raw = yaml.safe_load(SHAPES.read_text(encoding="utf-8"))
    shapes = [Entry(e["cat"], e["text"], e["expect"], e.get("labels", "CD")) for e in raw]
    assert len(shapes) >= 100 and {e.expect for e in shapes} == {"C", "D", "refuse"}
    misreads = read_corpus(shapes)
    report = "\n".join(str(m) for m in misreads)
    assert not [m for m in misreads if m.kind != "refused a clear answer"], report
    assert 1 - len(misreads) / len(shapes) >= MIN_AGREEMENT, report


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


def shortcut_and_general(entries: list[Entry]) -> list[tuple[Entry, str | None, str | None]]:
    """For every reply whole_reply reads (without rules 3 to 6): the move it reads (None when doubt follows it, as
    parse_action refuses it) and the move the general rules read."""
    pairs = []
    for entry in entries:
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
        doubted = doubts_answer(t, quick.end) or lines_doubt(t, quick.end)  # parse_action's check, as _resolve's
        pairs.append((entry, None if doubted else quick.move, general.action))
    return pairs


def test_the_shortcut_reads_as_the_general_rules_do(corpus: list[Entry]) -> None:
    """whole_reply reads short replies without rules 3 to 6; on every corpus and shapes reply it takes, it
    must give the move those rules give."""
    shapes = [
        Entry(e["cat"], e["text"], e["expect"], e.get("labels", "CD")) for e in yaml.safe_load(SHAPES.read_text())
    ]
    pairs = shortcut_and_general(corpus + shapes)
    assert [(e, quick, general) for e, quick, general in pairs if quick != general] == []
    assert len(pairs) >= 100


# A one-line reply whose last sentence is an answer line: the shortcut takes the first ones; the last ones hold a
# key, an arrow or a final answer before it (whose value may run on), and are left to the general rules.
SENTENCE_ANSWERS = [
    Entry("answer_line", "I will cooperate this round. Final answer: C", "C", "CD"),
    Entry("answer_line", "Cooperation has paid off so far. Answer: C", "C", "CD"),
    Entry("answer_line", "They defected twice! My move: D", "D", "CD"),
    Entry("answer_line", "I will defect. Final answer: C", "C", "CD"),
    Entry("answer_line", "Should I defect? Final decision: J", "C", "JF"),
    Entry("answer_line", "I'd say cooperate. **Final answer: D**", "D", "CD"),
]
LEFT_TO_THE_RULES = [
    Entry("answer_line", "Final answer: C. Answer: D", "refuse", "CD"),
    Entry("answer_line", "My final answer is C. Answer: D", "refuse", "CD"),
    Entry("answer_line", "C -> D. Final answer: C", "C", "CD"),
    Entry("answer_line", "I will cooperate this round. Final answer: C or D", "refuse", "CD"),
]


def test_the_shortcut_reads_a_last_answer_sentence_as_the_general_rules_do() -> None:
    """The last sentence of a one-line reply, when it is "Key: label" and nothing before it is keyed, is read by
    the shortcut, and as the general rules read it; a reply with a key before it is not taken."""
    taken = shortcut_and_general(SENTENCE_ANSWERS)
    assert [(e.text, quick) for e, quick, _ in taken] == [(e.text, e.expect) for e in SENTENCE_ANSWERS]
    assert all(quick == general for _, quick, general in taken)
    assert shortcut_and_general(LEFT_TO_THE_RULES) == []
    for entry in SENTENCE_ANSWERS:
        assert parse_action(entry.text, LABELS[entry.labels]).action == entry.expect


def test_every_category_has_clear_and_refused_replies_of_its_shape(corpus: list[Entry]) -> None:
    """Each shape of issue 21 holds clear answers and, where a reply of that shape can choose nothing,
    replies to refuse, so a rule that reads everything of a shape is caught."""
    shapes = {"informal", "negation", "key_value", "arrow_label", "draft_revision", "history_quote", "jf_words",
              "future_plan", "hedge"}  # fmt: skip
    for cat in shapes:
        expects = Counter(e.expect for e in corpus if e.cat == cat)
        assert expects["refuse"] >= 2 and expects["C"] + expects["D"] >= 4, (cat, expects)


def test_the_report_script_counts_by_hand(tmp_path: Path) -> None:
    """The corpus report (run by the lead on held-out corpora) on a tiny corpus whose figures are
    worked by hand: 'C' read right, 'D' labelled C (an opposite read), 'C or D' labelled C (a clear
    answer refused), 'F' under J/F labelled refuse (an ambiguous reply accepted), 'C\\nD' refused
    as labelled. Categories are whatever the file says."""
    path = tmp_path / "tiny.yaml"
    path.write_text(
        "- {cat: x, expect: C, text: 'C'}\n- {cat: x, expect: C, text: 'D'}\n"
        "- {cat: y, expect: C, text: 'C or D'}\n- {cat: y, labels: JF, expect: refuse, text: 'F'}\n"
        '- {cat: y, expect: refuse, text: "C\\nD"}\n',
        encoding="utf-8",
    )
    by_cat, total = parse_corpus_report.report(parse_corpus_report.load(path))
    assert (total.entries, total.agree, total.opposite, total.ambiguous_accepted, total.ambiguous) == (5, 2, 1, 1, 2)
    assert (total.clear, total.clear_read, total.accepted) == (3, 1, 3)
    assert (by_cat["x"].opposite, by_cat["y"].clear - by_cat["y"].clear_read) == (1, 1)
    assert set(by_cat) == {"x", "y"}
