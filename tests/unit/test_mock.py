"""The mock provider: the same request always gets the same answer, and it plays from the facts a
request carries, never from the templates' wording."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness.calls.limits import EndpointLimiter, LimitSettings
from harness.calls.path import CallPath
from harness.calls.pricing import DEFAULT_PRICES, PriceTable
from harness.game.horizon import FixedHorizonInfo
from harness.game.match import Match, play_game
from harness.game.rules import PayoffMatrix
from harness.players.model.labels import ActionLabels
from harness.players.model.player import LLMAgent, ModelPlayer
from harness.players.model.prompts.builder import Ask, PromptBuilder, PromptLayout, PromptSettings
from harness.players.model.settings import ParsePolicy
from harness.players.strategies import make_spec
from harness.players.strategies.play import play_strategies
from harness.providers.base import Sample, SamplingParams
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
        # The classic layout's prompts, as the answers were pinned with: what is pinned is how a request is hashed.
        builder = PromptBuilder(PromptSettings(labels=labels, answer_format=fmt, layout=PromptLayout.CLASSIC))
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


# ---- it plays from the facts, not the wording ---------------------------------------------------------

# The stock templates' meaning in other words, another language and another layout (history newest first,
# the options and payoffs in a table): a model reading them would play the same, so must the mock.
REWORDED = {
    "system.j2": "Juego de dos personas. Opciones: {% for o in options %}«{{ o.label }}» {% endfor %}"
    "{% if persona %}{{ persona }}{% endif %}",
    "round.j2": "R{{ round }}{% if horizon.kind == 'fixed' %}/{{ horizon.n_rounds }}{% endif %}\n"
    "| tú | el otro | puntos |\n"
    "{% for p in payoffs %}| {{ p.you }} | {{ p.they }} | {{ p.you_get }}:{{ p.they_get }} |\n{% endfor %}"
    "{% for r in history | reverse %}#{{ r.round }} {{ r.they }}<-otro tú->{{ r.you }}\n{% endfor %}"
    "{% if answer_format == 'json' %}JSON: action = {{ options[0].label }} | {{ options[1].label }}"
    "{% else %}¿{{ options[0].label }} o {{ options[1].label }}?{% endif %}",
}
GAME = PayoffMatrix()
HORIZON = FixedHorizonInfo(30)
CLASSIC = {"tft": "TFT", "grim": "GRIM", "cooperator": "ALLC", "defector": "ALLD"}


def play_mock(behaviour: str, opponent: str, seat: str, settings: PromptSettings, seed: int) -> Match:
    """One noisy 30-round game of ``mock/<behaviour>`` against the classic ``opponent``, through the model
    player's own path (prompt, call path, provider, parser), the mock in ``seat``."""
    player = ModelPlayer(name=f"mock/{behaviour}", provider=MockProvider(behaviour),
                         limiter=EndpointLimiter(LimitSettings(concurrency=2)), prompts=PromptBuilder(settings),
                         params=SamplingParams(), parse=ParsePolicy())  # fmt: skip
    calls = CallPath(cache=None, prices=PriceTable.load(DEFAULT_PRICES))
    agent = LLMAgent(player, calls, seat=seat, game_id=seed, game_seed=seed, rng=random.Random(seed),
                     sample=Sample(condition=opponent, replicate=seed, seat=seat))  # fmt: skip
    strategy = make_spec(opponent).build(GAME, random.Random(seed))
    a, b = (agent, strategy) if seat == "a" else (strategy, agent)
    match = Match(GAME, 0.1, random.Random(seed))
    return anyio.run(play_game, match, a, b, HORIZON.n_rounds, HORIZON)


def play_classic(behaviour: str, opponent: str, seat: str, seed: int) -> Match:
    """The same game with the classic strategy the mock behaviour stands for in its seat."""
    mine = make_spec(CLASSIC[behaviour]).build(GAME, random.Random(seed))
    theirs = make_spec(opponent).build(GAME, random.Random(seed))
    a, b = (mine, theirs) if seat == "a" else (theirs, mine)
    return play_strategies(Match(GAME, 0.1, random.Random(seed)), a, b, HORIZON.n_rounds)  # type: ignore[arg-type]


def moves(match: Match) -> tuple[str, str, str, str]:
    return ("".join(match.intended_a), "".join(match.intended_b), "".join(match.moves_a), "".join(match.moves_b))


@pytest.mark.slow
@pytest.mark.parametrize("behaviour", sorted(CLASSIC))
@pytest.mark.parametrize(
    "controls",
    [{}, {"labels": NEUTRAL, "answer_format": "json", "shuffle_options": True}, {"answer_format": "label"}],
    ids=["defaults", "neutral-json-shuffled", "label"],
)
def test_rewording_the_templates_leaves_every_mock_move_unchanged(
    behaviour: str, controls: dict[str, Any], tmp_path: Path
) -> None:
    for name, text in REWORDED.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    stock = PromptSettings(**controls)
    reworded = PromptSettings(template_dir=str(tmp_path), **controls)
    stock_prompt = PromptBuilder(stock).render(make_view("CD", "DD"))
    assert stock_prompt != PromptBuilder(reworded).render(make_view("CD", "DD"))  # the words really differ
    for seat, opponent, seed in (("a", "TFT", 1), ("a", "ALLD", 2), ("a", "RAND", 3), ("b", "WSLS", 4),
                                 ("b", "STFT", 5), ("b", "ALT", 6)):  # fmt: skip
        played = moves(play_mock(behaviour, opponent, seat, stock, seed))
        assert moves(play_mock(behaviour, opponent, seat, reworded, seed)) == played, opponent
        # and both are the classic strategy the behaviour names, in the same noisy game
        assert moves(play_classic(behaviour, opponent, seat, seed)) == played, opponent
        assert "D" in played[2] + played[3] and "C" in played[2] + played[3]  # noise and opponents mix the moves


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(golden_answers(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN}")
