"""The mock provider: the same request always gets the same answer, and it plays from the facts a
request carries, never from the templates' wording."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import anyio

from harness.parsing import ActionLabels
from harness.prompts import Ask, PromptBuilder, PromptSettings
from harness.providers.base import SamplingParams
from harness.providers.mock import MockProvider, MockServerError
from tests.unit.test_prompts import make_view

GOLDEN = Path(__file__).parent / "golden" / "mock_answers.json"
SPECS = ("random", "random?p=0.2&seed=5", "tft?unparseable=0.3&error_rate=0.2&confused=0.5&seed=7", "grim",
         "cooperator?unparseable=0.5", "defector")  # fmt: skip
NEUTRAL = ActionLabels(cooperate="J", defect="F")


# ---- the same request, the same answer ------------------------------------------------------------


def golden_answers() -> dict[str, list[str]]:
    """Each spec's answers (or ``error 500``) to requests over several game states, prompt settings,
    sampling parameters and question kinds, in order."""
    rng = random.Random(4)
    requests = []
    for fmt, labels, order in itertools.product(("free", "json", "label"), (ActionLabels(), NEUTRAL), ("CD", "DC")):
        builder = PromptBuilder(PromptSettings(labels=labels, answer_format=fmt))
        for _ in range(4):
            played = rng.randint(0, 8)
            own = "".join(rng.choice("CD") for _ in range(played))
            opp = "".join(rng.choice("CD") for _ in range(played))
            view = make_view(own, opp, seat=rng.choice("ab"))
            ask = rng.choice([None, None, Ask(kind="payoff", you=labels.cooperate, they=labels.defect, expected="0,5"),
                              Ask(kind="horizon", expected="50")])  # fmt: skip
            messages = builder.render(view, order) if ask is None else builder.render_question(view, ask, order)  # type: ignore[arg-type]
            params = SamplingParams(temperature=rng.choice([None, 0.0, 0.7, 1]), max_tokens=rng.choice([16, 256]),
                                    seed=rng.choice([None, rng.randrange(2**31)]))  # fmt: skip
            requests.append((messages, params, builder.facts(view, order, ask)))  # type: ignore[arg-type]
    for text in ("Ronda 3 — ¿J o F?", 'tab\tdel\x7f quote" backslash\\', "emoji 🎲 and \u2028"):  # beyond plain ASCII
        requests.append(([{"role": "system", "content": "Só uma."}, {"role": "user", "content": text}],
                         SamplingParams(seed=1), None))  # fmt: skip
    out: dict[str, list[str]] = {}
    for spec in SPECS:
        provider = MockProvider(spec)
        answers = []
        for messages, params, facts in requests:
            try:
                answers.append(anyio.run(provider.generate, messages, params, 10.0, facts).text)
            except MockServerError as exc:
                answers.append(f"error {exc.status}")
        out[spec] = answers
    return out


def test_the_mock_gives_the_answers_it_always_gave() -> None:
    """The answer is drawn from the request (messages, parameters, options): a change of how the request
    is hashed would silently change every mock run, so the answers are pinned."""
    assert golden_answers() == json.loads(GOLDEN.read_text(encoding="utf-8"))


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(golden_answers(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN}")
