"""Report: how the move parser reads a hand-labelled corpus of replies, per category and overall.

Any corpus in the format of tests/unit/parse_corpus.yaml works (a YAML list of entries
``{cat, labels: CD|JF (optional, default CD), expect: C|D|refuse, text}``); no category name is
assumed, so the same script measures the project's own corpus and corpora written apart from the
parser's rules:

    .venv/bin/python tests/benchmarks/parse_corpus_report.py tests/unit/parse_corpus.yaml [--misreads]

Figures, per category and overall: ``agreement`` (entries read exactly as labelled; a refused clear
answer is a disagreement), ``opposite`` (a clear answer read as the other move), ``ambiguous
accepted`` (a reply labelled ``refuse`` read as a move, also per 200 accepted replies), ``clear
refused`` (clear answers the parser refused, and the share of clear answers read). Each reply is read
with its label set's payoff matrix (PAYOFFS), as a model player reads its game's replies.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from harness.game.rules import PayoffMatrix
from harness.players.model.labels import ActionLabels
from harness.players.model.parsing.policy import parse_action

HEADER = (
    f"{'category':22s} {'n':>5s} {'agree':>8s} {'opposite':>8s} {'amb.acc':>9s} {'/200':>7s} "
    f"{'clear refused':>11s} {'read':>6s}"
)
LABELS = {"CD": ActionLabels(), "JF": ActionLabels(cooperate="J", defect="F")}
# The payoffs each label set's prompts show: C/D games use the default matrix (3/0/5/1), J/F games the
# akata2023 suite's (8/0/10/5). The parser reads a reply that chooses by payoffs only with its game's matrix.
PAYOFFS = {"CD": PayoffMatrix(), "JF": PayoffMatrix(cc=(8.0, 8.0), cd=(0.0, 10.0), dc=(10.0, 0.0), dd=(5.0, 5.0))}


@dataclass
class Tally:
    """The counts of one category (or of all)."""

    entries: int = 0
    agree: int = 0
    clear: int = 0
    clear_read: int = 0
    opposite: int = 0
    ambiguous: int = 0
    ambiguous_accepted: int = 0
    accepted: int = 0
    misreads: list[str] = field(default_factory=list)

    def add(self, expect: str, got: str, line: str) -> None:
        self.entries += 1
        self.agree += got == expect
        self.accepted += got != "refuse"
        if expect == "refuse":
            self.ambiguous += 1
            self.ambiguous_accepted += got != "refuse"
        else:
            self.clear += 1
            self.clear_read += got == expect
            self.opposite += got not in (expect, "refuse")
        if got != expect:
            self.misreads.append(line)

    def row(self, name: str) -> str:
        per200 = 200 * self.ambiguous_accepted / self.accepted if self.accepted else 0.0
        read = f"{self.clear_read / self.clear:6.1%}" if self.clear else "     —"
        return (
            f"{name:22s} {self.entries:5d} {self.agree / self.entries:8.1%} {self.opposite:8d} "
            f"{self.ambiguous_accepted:4d}/{self.ambiguous:<4d} {per200:7.2f} "
            f"{self.clear - self.clear_read:5d}/{self.clear:<5d} {read}"
        )


def load(path: Path) -> list[dict[str, str]]:
    """The corpus's entries, checked: a malformed entry is named and the script stops."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(raw, list):
        sys.exit(f"{path}: expected a YAML list of entries {{cat, labels, expect, text}}")
    for i, entry in enumerate(raw):
        ok = (
            isinstance(entry, dict)
            and isinstance(entry.get("text"), str)
            and entry.get("expect") in ("C", "D", "refuse")
            and entry.get("labels", "CD") in LABELS
        )
        if not ok:
            sys.exit(f"{path}: entry {i + 1} is not {{cat, labels: CD|JF, expect: C|D|refuse, text}}: {entry!r}")
    return raw


def report(entries: list[dict[str, str]]) -> tuple[dict[str, Tally], Tally]:
    by_cat: dict[str, Tally] = defaultdict(Tally)
    total = Tally()
    for entry in entries:
        labels = entry.get("labels", "CD")
        result = parse_action(entry["text"], LABELS[labels], PAYOFFS[labels])
        got = result.action or "refuse"
        cat = str(entry.get("cat", "-"))
        how = result.method or result.reason
        line = f"[{cat}, {labels}] expected {entry['expect']}, read {got} ({how}): {entry['text']!r}"
        by_cat[cat].add(entry["expect"], got, line)
        total.add(entry["expect"], got, line)
    return dict(by_cat), total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, nargs="+")
    parser.add_argument("--misreads", action="store_true", help="list every entry not read as labelled")
    args = parser.parse_args()
    for path in args.corpus:
        by_cat, total = report(load(path))
        print(f"{path}")
        print(HEADER)
        for cat in sorted(by_cat):
            print(by_cat[cat].row(cat))
        print(total.row("ALL"))
        if args.misreads:
            print("\n".join(total.misreads))
        print()


if __name__ == "__main__":
    main()
