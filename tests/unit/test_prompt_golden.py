"""The shipped templates' prompts, byte for byte, against a golden file.

The sweep covers every setting that changes the words (labels, reply format, option order, history
window, persona, horizon kind, seat, payoffs with fractions) at round 1, a middle round and the last
round, plus the comprehension questions and the re-asks. Each case's messages are stored as a SHA-256
digest, and a few whole, so that a diff shows what changed. A change of the shipped wording is a change
of what the models are asked, so it must be deliberate: regenerate the file with

    python -m tests.unit.test_prompt_golden

and say in the commit why the prompts changed. Each layout has its own file: ``prompts.json`` holds the classic
layout's prompts (PDBench 0.1's, unchanged since), ``prompts_cached.json`` the cached layout's (the default).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from harness.game.horizon import FixedHorizon, GeometricHorizon
from harness.game.rules import PayoffMatrix
from harness.players.model.labels import ActionLabels
from harness.players.model.parsing.policy import ParseResult
from harness.players.model.prompts.builder import Ask, PromptBuilder, PromptLayout, PromptSettings
from tests.unit.test_prompts import make_view

GOLDENS = {
    PromptLayout.CLASSIC: Path(__file__).parent / "golden" / "prompts.json",
    PromptLayout.CACHED: Path(__file__).parent / "golden" / "prompts_cached.json",
}
LABELS = {"CD": ActionLabels(), "JF": ActionLabels(cooperate="J", defect="F"),
          "words": ActionLabels(cooperate="Blue", defect="Red")}  # fmt: skip
# Asymmetric, with fractions, so that the two seats see different points.
GAME = PayoffMatrix(cc=(3.0, 2.0), cd=(-0.5, 5.25), dc=(6.0, 1.0), dd=(1.0, 0.5))
MOVES = [("C", "C"), ("C", "D"), ("D", "D"), ("D", "C"), ("C", "C"), ("D", "D")]  # a 7-round game's first 6
HORIZONS = {"fixed": FixedHorizon(7), "geometric": GeometricHorizon(0.125)}
PLAYED = (0, 3, 6)  # round 1, round 4, round 7 (the last of the fixed game)
WHOLE = {  # cases stored whole as well as digested
    "CD|free|CD|window=None|persona=None|fixed|a|played=3",
    "JF|json|DC|window=2|persona=cautious|geometric|b|played=6",
    "words|label|CD|window=None|persona=cooperative|fixed|b|played=6",
    "JF|free|DC|window=None|persona=None|fixed|a|played=0",
    "question|payoff|JF|json|DC|fixed|played=3",
    "question|horizon|CD|free|CD|geometric|played=0",
    "question|last_move|words|label|DC|fixed|played=6",
}


def _digest(messages: Any) -> str:
    return hashlib.sha256(json.dumps(messages, ensure_ascii=False).encode()).hexdigest()


def cases(layout: PromptLayout) -> dict[str, Any]:
    """Every case's messages (a list of chat messages, or a re-ask's text) in ``layout``, by case name."""
    out: dict[str, Any] = {}
    builders: dict[tuple[str, str, int | None, str | None], PromptBuilder] = {}
    for labels, fmt, window, persona in itertools.product(LABELS, ("free", "json", "label"), (None, 2),
                                                          (None, "cautious", "cooperative")):  # fmt: skip
        settings = PromptSettings(
            labels=LABELS[labels], answer_format=fmt, history_window=window, persona=persona, layout=layout
        )
        builders[(labels, fmt, window, persona)] = PromptBuilder(settings)
    for (labels, fmt, window, persona), builder in builders.items():
        for order, horizon, seat, played in itertools.product(("CD", "DC"), HORIZONS, ("a", "b"), PLAYED):
            view = _view(seat, horizon, played)
            name = f"{labels}|{fmt}|{order}|window={window}|persona={persona}|{horizon}|{seat}|played={played}"
            out[name] = builder.render(view, order)  # type: ignore[arg-type]
    for (labels, fmt, window, persona), builder in builders.items():
        if window is not None or persona is not None:
            continue
        lab = LABELS[labels]
        for order, horizon, played in itertools.product(("CD", "DC"), HORIZONS, PLAYED):
            view = _view("b", horizon, played)
            asks = [Ask(kind="payoff", you=lab.defect, they=lab.cooperate, expected="5.25,-0.5"),
                    Ask(kind="horizon", expected="7")]  # fmt: skip
            if played:
                asks.append(Ask(kind="last_move", round=played, expected=MOVES[played - 1][1]))
            for ask in asks:
                if ask.kind != "horizon" and horizon != "fixed":
                    continue  # the horizon kind changes only the horizon question's words
                name = f"question|{ask.kind}|{labels}|{fmt}|{order}|{horizon}|played={played}"
                out[name] = builder.render_question(view, ask, order)  # type: ignore[arg-type]
        for order, reason in itertools.product(("CD", "DC"), ("", "no option named")):
            failed = ParseResult(action=None, reason=reason or None)
            out[f"reask|{labels}|{fmt}|{order}|{reason or 'no reason'}"] = builder.reask(failed, order)  # type: ignore[arg-type]
    return out


def _view(seat: str, horizon: str, played: int) -> Any:
    own = "".join(m[0] for m in MOVES[:played])
    opp = "".join(m[1] for m in MOVES[:played])
    return make_view(own, opp, seat=seat, horizon=HORIZONS[horizon], game=GAME)


def golden(layout: PromptLayout) -> dict[str, Any]:
    rendered = cases(layout)
    return {
        "digests": {name: _digest(messages) for name, messages in rendered.items()},
        "whole": {name: rendered[name] for name in sorted(WHOLE)},
    }


@pytest.mark.parametrize("layout", list(PromptLayout))
def test_the_shipped_templates_render_the_golden_prompts(layout: PromptLayout) -> None:
    expected = json.loads(GOLDENS[layout].read_text(encoding="utf-8"))
    actual = golden(layout)
    assert actual["whole"] == expected["whole"]
    assert sorted(actual["digests"]) == sorted(expected["digests"])
    changed = [name for name, digest in actual["digests"].items() if expected["digests"][name] != digest]
    assert not changed, f"{len(changed)} prompts differ from the golden file, e.g. {changed[:3]}"


def test_the_golden_sweep_covers_every_wording_setting() -> None:
    names = golden(PromptLayout.CACHED)["digests"]
    assert len(names) > 1000
    for part in ("free", "json", "label", "DC", "window=2", "persona=cautious", "geometric", "|b|", "played=6",
                 "question|payoff", "question|horizon", "question|last_move", "reask|"):  # fmt: skip
        assert any(part in name for name in names), part
    assert set(names) >= WHOLE


if __name__ == "__main__":
    for layout, path in GOLDENS.items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(
            json.dumps(golden(layout), indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8"
        )
        print(f"wrote {path}")
