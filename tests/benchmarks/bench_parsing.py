"""Benchmark: microseconds per ``parse_action`` call, for the replies models typically give.

``parse_action`` runs on every model call, so the common short replies (a bare label, bold, a
JSON object, an answer line) must stay cheap; long reasoning costs more and is reported too.
Only the public API is used, so the same script measures any version of the parser:

    .venv/bin/python tests/benchmarks/bench_parsing.py
    PYTHONPATH=/path/to/other/checkout .venv/bin/python tests/benchmarks/bench_parsing.py
"""

from __future__ import annotations

import timeit

from harness.players.model.labels import ActionLabels
from harness.players.model.parsing import policy as parsing
from harness.players.model.parsing.policy import parse_action

_REASONING = (
    "The other player defected in round 3 but returned to cooperation afterwards. If I defect now, "
    "they may retaliate next round, and we could fall into mutual defection for the rest of the game. "
    "Cooperating gives us 3 each per round; defecting gives me 5 once and then probably 1 per round. "
    "Considering the long horizon, cooperation seems best, and they have been forgiving so far.\n\n"
)
REPLIES: dict[str, tuple[str, ActionLabels]] = {
    "C": ("C", ActionLabels()),
    "**D**": ("**D**", ActionLabels()),
    "J (neutral labels)": ("J", ActionLabels("J", "F")),
    '{"action": "C"}': ('{"action": "C"}', ActionLabels()),
    "Action: D": ("Action: D", ActionLabels()),
    "I will play D.": ("I will play D.", ActionLabels()),
    "reasoning + Final answer (400 chars)": (_REASONING + "Final answer: C", ActionLabels()),
    "reasoning + I'll cooperate. (400 chars)": (_REASONING + "I'll cooperate.", ActionLabels()),
    "reasoning + I'll cooperate. (2,000 chars)": (_REASONING * 5 + "I'll cooperate.", ActionLabels()),
    # the shapes of issue 21: informal, refusals, keys of any name, revisions, plans and hedges
    "ok C": ("ok C", ActionLabels()),
    "I won't defect this round.": ("I won't defect this round.", ActionLabels()),
    '{"selected_option": "D"}': ('{"selected_option": "D"}', ActionLabels()),
    "Draft answer: C / Revised answer: D": ("Draft answer: C\nRevised answer: D", ActionLabels()),
    "Frankly, Option F. (J/F)": ("Frankly, Option F.", ActionLabels("J", "F")),
    # the fourth pass: a doubting field, a checklist, a correction, a payoff profile
    '{"move": "D", "final": false}': ('{"move": "D", "final": false}', ActionLabels()),
    "[x] C [ ] D": ("[x] C [ ] D", ActionLabels()),
    "F — sorry, I meant J. (J/F)": ("F — sorry, I meant J.", ActionLabels("J", "F")),
    "reasoning + C this round, plan, hedge (2,000 chars)": (
        _REASONING * 5 + "Going with C this round — but one more defection and I'll defect for the rest of the game. "
        "Although... D might be better.",
        ActionLabels(),
    ),
}


def main() -> None:
    print(f"parser: {parsing.__file__}")
    for name, (text, labels) in REPLIES.items():
        parse_action(text, labels)  # compile the grammar first
        number = 2000
        best = min(timeit.repeat(lambda t=text, lab=labels: parse_action(t, lab), number=number, repeat=5))
        print(f"{name:44s} {best / number * 1e6:8.1f} us   -> {parse_action(text, labels).action}")


if __name__ == "__main__":
    main()
