"""Prompt templates: horizon wording, history, labels, personas, and errors caught by check()."""

from __future__ import annotations

import functools
import random
from pathlib import Path

import pytest
from jinja2 import FileSystemLoader, StrictUndefined, Template
from jinja2.sandbox import SandboxedEnvironment
from pydantic import ValidationError

from harness.errors import ConfigError
from harness.game.horizon import FixedHorizon, FixedHorizonInfo, GeometricHorizon, Horizon, HorizonKind
from harness.game.rules import PayoffMatrix
from harness.game.view import RoundView
from harness.players.model.labels import ActionLabels
from harness.players.model.prompts import builder as prompts
from harness.players.model.prompts import files as prompt_files
from harness.players.model.prompts.builder import (
    PromptBuilder,
    PromptLayout,
    PromptSettings,
    available_personas,
    round_context,
    synthetic_views,
)
from harness.players.model.prompts.context import CACHE_BREAK

NEUTRAL = ActionLabels(cooperate="J", defect="F")


def make_view(
    own: str = "",
    opp: str = "",
    *,
    seat: str = "a",
    horizon: Horizon | None = None,
    game: PayoffMatrix | None = None,
) -> RoundView:
    """A view after the moves ``own``/``opp`` (strings of C/D), with payoffs from ``game``."""
    game = game or PayoffMatrix()
    table = game.table()
    if seat == "a":
        own_p = [table[(m, o)][0] for m, o in zip(own, opp, strict=True)]
        opp_p = [table[(m, o)][1] for m, o in zip(own, opp, strict=True)]
    else:
        own_p = [table[(o, m)][1] for m, o in zip(own, opp, strict=True)]
        opp_p = [table[(o, m)][0] for m, o in zip(own, opp, strict=True)]
    return RoundView(
        seat="a" if seat == "a" else "b",
        round=len(own) + 1,
        horizon=(horizon or FixedHorizon(50)).known_to_players(),
        payoffs=game,
        own_moves=tuple(own),  # type: ignore[arg-type]
        opponent_moves=tuple(opp),  # type: ignore[arg-type]
        own_payoffs=tuple(own_p),
        opponent_payoffs=tuple(opp_p),
        own_score=sum(own_p),
        opponent_score=sum(opp_p),
    )


def text_of(messages: list[dict[str, str]]) -> str:
    return "\n".join(m["content"] for m in messages)


def user_prompt(settings: PromptSettings, view: RoundView) -> str:
    return PromptBuilder(settings).render(view)[1]["content"]


def test_messages_are_a_system_and_a_user_message() -> None:
    messages = PromptBuilder().render(make_view())
    assert [m["role"] for m in messages] == ["system", "user"]
    assert all(m["content"] and m["content"] == m["content"].strip() for m in messages)


def test_fixed_horizon_states_round_and_length() -> None:
    prompt = user_prompt(PromptSettings(), make_view("CCCCCC", "CCCCCD"))
    assert "This is round 7 of 50." in prompt
    assert "continues with probability" not in prompt


def test_geometric_horizon_gives_only_the_continuation_probability() -> None:
    horizon = GeometricHorizon(0.05, 37)
    for own, opp in (("", ""), ("CCCCCC", "CDCCCC")):
        text = text_of(PromptBuilder().render(make_view(own, opp, horizon=horizon)))
        assert f"This is round {len(own) + 1}." in text
        assert "After each round, the game continues with probability 0.95." in text
        assert "37" not in text and " of 50" not in text
        for leak in ("last round", "final round", "rounds left", "remaining", "will end"):
            assert leak not in text.lower()


def test_round_one_has_no_history() -> None:
    prompt = user_prompt(PromptSettings(), make_view())
    assert "No rounds have been played yet." in prompt
    assert "Round 1:" not in prompt
    assert "you have 0 and the other player has 0" in prompt


def test_full_history_from_the_players_own_side() -> None:
    prompt = user_prompt(PromptSettings(), make_view("CD", "DD"))
    assert "- Round 1: you chose C, the other player chose D; you got 0, they got 5." in prompt
    assert "- Round 2: you chose D, the other player chose D; you got 1, they got 1." in prompt
    assert "you have 1 and the other player has 6" in prompt
    assert "No rounds have been played yet." not in prompt


def test_history_window_shows_only_the_last_rounds_but_total_scores() -> None:
    prompt = user_prompt(PromptSettings(history_window=2), make_view("CCCCD", "CCCDD"))
    assert "Round 3:" not in prompt and "Round 1:" not in prompt
    assert "- Round 4: you chose C, the other player chose D" in prompt
    assert "- Round 5: you chose D, the other player chose D" in prompt
    assert "The last 2 of the 5 rounds played so far:" in prompt
    assert "you have 10 and the other player has 15" in prompt


def test_history_window_larger_than_history_shows_everything() -> None:
    prompt = user_prompt(PromptSettings(history_window=10), make_view("CD", "CC"))
    assert "Round 1:" in prompt and "Round 2:" in prompt
    assert "The last" not in prompt


def test_payoff_matrix_is_shown_from_the_players_seat() -> None:
    game = PayoffMatrix(cc=(3, 2), cd=(0, 6), dc=(4, 1), dd=(1, 0.5))
    a = user_prompt(PromptSettings(), make_view(seat="a", game=game))
    b = user_prompt(PromptSettings(), make_view(seat="b", game=game))
    assert "If you choose C and the other player chooses D, you get 0 and they get 6." in a
    assert "If you choose C and the other player chooses C, you get 3 and they get 2." in a
    # Seat b choosing C against a's D is the cell (D, C) = (4, 1) seen from b.
    assert "If you choose C and the other player chooses D, you get 1 and they get 4." in b
    assert "If you choose D and the other player chooses D, you get 0.5 and they get 1." in b


def test_default_labels_name_the_moves() -> None:
    text = text_of(PromptBuilder().render(make_view("C", "D")))
    assert "C (cooperate) or D (defect)" in text
    assert "Reply with exactly one of C or D." in text


def test_neutral_labels_never_mention_cooperate_or_defect() -> None:
    for persona in [None, *available_personas()]:
        settings = PromptSettings(labels=NEUTRAL, persona=persona)
        builder = PromptBuilder(settings)
        for view in (make_view(), make_view("CDDC", "DDCC"), make_view("CD", "DC", seat="b")):
            text = text_of(builder.render(view)).lower()
            assert "cooperat" not in text and "defect" not in text, persona


def test_neutral_labels_appear_in_matrix_history_and_request() -> None:
    prompt = user_prompt(PromptSettings(labels=NEUTRAL), make_view("C", "D"))
    assert "If you choose J and the other player chooses F, you get 0 and they get 5." in prompt
    assert "If you choose F and the other player chooses J, you get 5 and they get 0." in prompt
    assert "- Round 1: you chose J, the other player chose F; you got 0, they got 5." in prompt
    assert "Reply with exactly one of J or F." in prompt
    assert " C " not in prompt and " D " not in prompt


def test_templates_never_say_prisoners_dilemma() -> None:
    for path in [*prompts.PROMPTS_DIR.glob("*.j2"), *prompts.PERSONAS_DIR.glob("*.md")]:
        assert "prisoner" not in path.read_text(encoding="utf-8").lower(), path
    for view in synthetic_views():
        assert "prisoner" not in text_of(PromptBuilder().render(view)).lower()


def test_shipped_personas_exist() -> None:
    assert {"neutral", "cooperative", "competitive", "cautious"} <= set(available_personas())


def test_persona_by_name_is_in_the_system_prompt_only() -> None:
    persona_text = (prompts.PERSONAS_DIR / "cooperative.md").read_text(encoding="utf-8").strip()
    system, user = PromptBuilder(PromptSettings(persona="cooperative")).render(make_view())
    assert persona_text in system["content"]
    assert persona_text not in user["content"]
    plain = PromptBuilder().render(make_view())[0]["content"]
    assert persona_text not in plain


def test_persona_by_path(tmp_path: Path) -> None:
    path = tmp_path / "stubborn.md"
    path.write_text("You never change your mind once you pick {{ labels.defect }}.\n", encoding="utf-8")
    system = PromptBuilder(PromptSettings(persona=str(path), labels=NEUTRAL)).render(make_view())[0]["content"]
    assert "You never change your mind once you pick F." in system


def test_unknown_persona_lists_the_available_ones() -> None:
    with pytest.raises(ConfigError) as err:
        PromptBuilder(PromptSettings(persona="saintly"))
    message = str(err.value)
    assert "unknown persona 'saintly'" in message
    for name in ("cautious", "competitive", "cooperative", "neutral"):
        assert name in message


def test_missing_persona_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        PromptBuilder(PromptSettings(persona=str(tmp_path / "nope.md")))


def test_user_template_with_a_typo_fails_check_naming_the_variable(tmp_path: Path) -> None:
    (tmp_path / "round.j2").write_text(
        "Round {{ round }}.\n{% if history %}Last: {{ history[-1].yuo }}{% endif %}\n"
        "Pick {{ labels.cooperate }} or {{ labels.defect }}.\n",
        encoding="utf-8",
    )
    builder = PromptBuilder(PromptSettings(template_dir=str(tmp_path)))  # loads fine
    with pytest.raises(ConfigError) as err:
        builder.check()
    assert "round.j2" in str(err.value)
    assert "yuo" in str(err.value)


def test_user_template_with_an_undefined_top_level_variable(tmp_path: Path) -> None:
    (tmp_path / "system.j2").write_text("Play well, {{ player_name }}.", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"system\.j2.*'player_name' is undefined"):
        PromptBuilder(PromptSettings(template_dir=str(tmp_path))).check()


def test_user_dir_overrides_one_template_and_falls_back_for_the_other(tmp_path: Path) -> None:
    (tmp_path / "round.j2").write_text("R{{ round }}: {{ labels.cooperate }}/{{ labels.defect }}?", encoding="utf-8")
    builder = PromptBuilder(PromptSettings(template_dir=str(tmp_path)))
    builder.check()
    system, user = builder.render(make_view("C", "C"))
    assert user["content"] == "R2: C/D?"
    assert "over a series of rounds" in system["content"]


def test_user_personas_folder_is_searched(tmp_path: Path) -> None:
    (tmp_path / "personas").mkdir()
    (tmp_path / "personas" / "stoic.md").write_text("You are calm.", encoding="utf-8")
    system = PromptBuilder(PromptSettings(template_dir=str(tmp_path), persona="stoic")).render(make_view())[0]
    assert "You are calm." in system["content"]


def test_template_syntax_error_fails_at_load(tmp_path: Path) -> None:
    (tmp_path / "round.j2").write_text("{% if round %}no end", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"round\.j2.*syntax error"):
        PromptBuilder(PromptSettings(template_dir=str(tmp_path)))


def test_unknown_template_name() -> None:
    with pytest.raises(ConfigError, match=r"'rnd\.j2' not found"):
        PromptBuilder(PromptSettings(round_template="rnd.j2"))


def test_missing_template_dir(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not a folder"):
        PromptBuilder(PromptSettings(template_dir=str(tmp_path / "absent")))


def test_missing_repo_prompts_folder_names_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prompt_files, "PROMPTS_DIR", tmp_path / "prompts")
    with pytest.raises(ConfigError) as err:
        PromptBuilder()
    assert str(tmp_path / "prompts") in str(err.value)


def test_check_refuses_a_template_that_hides_the_labels(tmp_path: Path) -> None:
    (tmp_path / "round.j2").write_text("Round {{ round }}. Reply C or D.", encoding="utf-8")
    PromptBuilder(PromptSettings(template_dir=str(tmp_path))).check()  # C/D labels: fine
    with pytest.raises(ConfigError, match="never shows the label"):
        PromptBuilder(PromptSettings(template_dir=str(tmp_path), labels=NEUTRAL)).check()


def test_sandbox_blocks_unsafe_templates(tmp_path: Path) -> None:
    (tmp_path / "round.j2").write_text("{{ labels.__class__.__mro__[1].__subclasses__() }}", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"round\.j2"):
        PromptBuilder(PromptSettings(template_dir=str(tmp_path))).check()


@pytest.mark.parametrize("persona", [None, "neutral", "cooperative", "competitive", "cautious"])
@pytest.mark.parametrize("labels", [ActionLabels(), NEUTRAL])
def test_shipped_templates_pass_check(persona: str | None, labels: ActionLabels) -> None:
    PromptBuilder(PromptSettings(persona=persona, labels=labels, history_window=2)).check()


def test_rendering_is_deterministic() -> None:
    settings = PromptSettings(persona="cautious", history_window=3)
    horizon = GeometricHorizon(0.1)
    first = PromptBuilder(settings).render(make_view("CDCCD", "DDCCC", horizon=horizon))
    builder = PromptBuilder(settings)
    assert builder.render(make_view("CDCCD", "DDCCC", horizon=horizon)) == first
    assert builder.render(make_view("CDCCD", "DDCCC", horizon=horizon)) == first


def test_round_context_is_built_from_the_view_only() -> None:
    context = round_context(make_view("CD", "DD"), PromptSettings(labels=NEUTRAL, history_window=1))
    assert context == {
        "round": 3,
        "rounds_played": 2,
        "labels": {"cooperate": "J", "defect": "F"},
        "use_words": False,
        "options": [{"label": "J", "word": "cooperate"}, {"label": "F", "word": "defect"}],
        "options_unshuffled": [{"label": "J", "word": "cooperate"}, {"label": "F", "word": "defect"}],
        "answer_format": "free",
        "horizon": {"kind": "fixed", "n_rounds": 50},
        "payoffs": [
            {"you": "J", "they": "J", "you_get": "3", "they_get": "3"},
            {"you": "J", "they": "F", "you_get": "0", "they_get": "5"},
            {"you": "F", "they": "J", "you_get": "5", "they_get": "0"},
            {"you": "F", "they": "F", "you_get": "1", "they_get": "1"},
        ],
        "payoffs_unshuffled": [
            {"you": "J", "they": "J", "you_get": "3", "they_get": "3"},
            {"you": "J", "they": "F", "you_get": "0", "they_get": "5"},
            {"you": "F", "they": "J", "you_get": "5", "they_get": "0"},
            {"you": "F", "they": "F", "you_get": "1", "they_get": "1"},
        ],
        "history": [{"round": 2, "you": "F", "they": "F", "you_got": "1", "they_got": "1"}],
        # over the whole game, not the window: you played C then D, they D twice
        "counts": {"you": {"cooperate": 1, "defect": 1}, "they": {"cooperate": 0, "defect": 2}},
        "rounds_hidden": 1,
        "your_score": "1",
        "their_score": "6",
        "question": None,
        "ask": None,
        "cache_break": CACHE_BREAK,
    }


def test_round_context_geometric_horizon_carries_no_length() -> None:
    view = make_view(horizon=GeometricHorizon(0.05, 37))
    context = round_context(view, PromptSettings())
    assert context["horizon"] == {"kind": "geometric", "continuation_prob": "0.95"}


def test_settings_validation() -> None:
    settings = PromptSettings.model_validate({"labels": {"cooperate": "J", "defect": "F"}, "history_window": 5})
    assert settings.labels == NEUTRAL
    with pytest.raises(ValidationError):
        PromptSettings.model_validate({"persona_name": "x"})
    with pytest.raises(ValidationError):
        PromptSettings(history_window=0)
    with pytest.raises(ValidationError):
        PromptSettings.model_validate({"labels": {"cooperate": "J", "defect": "J"}})


# ---- the builder renders exactly what Jinja renders from the templates as written ---------------


@functools.cache
def jinja_environment(folders: tuple[str, ...]) -> SandboxedEnvironment:
    """Plain Jinja over these template folders, one per folder list: it compiles each template once (and
    recompiles one whose file changed), as the builder does, so the comparison need not compile for every view."""
    return SandboxedEnvironment(
        loader=FileSystemLoader([*folders, str(prompts.PROMPTS_DIR)]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


@functools.cache
def jinja_persona(folders: tuple[str, ...], text: str) -> Template:
    """A persona's text compiled once by plain Jinja (the cache's key is the text itself)."""
    return jinja_environment(folders).from_string(text)


def jinja_messages(settings: PromptSettings, view: RoundView) -> list[dict[str, str]]:
    """The messages as plain Jinja renders the templates as written: the reference for the builder."""
    folders = (str(Path(settings.template_dir)),) if settings.template_dir else ()
    if settings.layout is PromptLayout.CLASSIC:
        folders = (*folders, str(prompt_files.CLASSIC_DIR))
    env = jinja_environment(folders)
    context = round_context(view, settings)
    persona = None
    if settings.persona is not None:
        path = prompts.PERSONAS_DIR / f"{settings.persona}.md"
        persona = jinja_persona(folders, path.read_text(encoding="utf-8")).render(context).strip()
    context["persona"] = persona
    return [  # the cache breaks the cached layout's template writes are cut out (see test_prompt_layout)
        {"role": role, "content": env.get_template(name).render(context).strip().replace(CACHE_BREAK, "")}
        for role, name in (("system", settings.system_template), ("user", settings.round_template))
    ]


def games(n_rounds: int, seed: int) -> list[list[tuple[str, str]]]:
    """A few games' moves, with and without defections."""
    rng = random.Random(seed)
    return [[(rng.choice("CD"), rng.choice("CD")) for _ in range(n_rounds)] for _ in range(3)]


@pytest.mark.slow
@pytest.mark.parametrize("persona", [None, "cautious"])
@pytest.mark.parametrize("labels", [ActionLabels(), NEUTRAL])
@pytest.mark.parametrize("window", [None, 1, 4])
@pytest.mark.parametrize("layout", list(PromptLayout))
def test_the_shipped_templates_render_as_jinja_does(
    persona: str | None, labels: ActionLabels, window: int | None, layout: PromptLayout
) -> None:
    settings = PromptSettings(persona=persona, labels=labels, history_window=window, layout=layout)
    builder = PromptBuilder(settings)
    game = PayoffMatrix(cc=(3.0, 3.0), cd=(-0.5, 5.25), dc=(5.25, -0.5), dd=(1.0, 1.0))
    for horizon in (FixedHorizon(12), GeometricHorizon(0.1)):
        for moves in games(12, seed=window or 0):
            for played in range(len(moves) + 1):
                own = "".join(m for m, _ in moves[:played])
                opp = "".join(t for _, t in moves[:played])
                for seat in ("a", "b"):
                    view = make_view(own, opp, seat=seat, horizon=horizon, game=game)
                    assert builder.render(view) == jinja_messages(settings, view)


USER_TEMPLATES = {
    "plain loop": "{% for r in history %}[{{ r.round }}:{{ r.you }}/{{ r.they }} {{ r.you_got | int + 1 }}]"
    "{% endfor %} {{ labels.cooperate }} {{ labels.defect }}",
    "loop in ifs": "{% if round > 2 %}{% if history %}{% for x in history %}{{ x.you ~ x.they }}\n{% endfor %}"
    "{% endif %}{% else %}start{% endif %} {{ labels.cooperate }}{{ labels.defect }}",
    "two loops": "{% for r in history %}{{ r.you }}{% endfor %}|"
    "{% for r in history %}{% if r.you == r.they %}={% endif %}{% set n = r.round * 2 %}{{ n }}{% endfor %} C D",
    "loop.index": "{% for r in history %}{{ loop.index }}{{ r.you }}{% endfor %} C D",
    "outer variable": "{% for r in history %}{{ r.you }}{{ labels.cooperate }}{% endfor %} C D",
    "filtered": "{% for r in history | reverse %}{{ r.you }}{% endfor %}"
    "{% for r in history if r.you == 'C' %}c{% endfor %} C D",
    "else": "{% for r in history %}{{ r.you }}{% else %}none{% endfor %} C D",
    "rebinds history": "{% set history = history[:1] %}{% for r in history %}{{ r.you }}{% endfor %} C D",
    "in a macro": "{% macro h() %}{% for r in history %}{{ r.you }}{% endfor %}{% endmacro %}{{ h() }} C D",
    "calls a method": "{% for r in history %}{{ r.you }}{% endfor %}{% if history %}{{ history[0].you }}"
    "{{ history[0].update({'you': history[0].you ~ 'X'}) }}{% endif %} C D",  # must not change the next round's
}


@pytest.mark.parametrize("name", sorted(USER_TEMPLATES))
def test_user_templates_render_as_jinja_does(name: str, tmp_path: Path) -> None:
    (tmp_path / "round.j2").write_text(USER_TEMPLATES[name], encoding="utf-8")
    (tmp_path / "system.j2").write_text("Rounds so far: {{ rounds_played }}. {{ persona }}", encoding="utf-8")
    settings = PromptSettings(template_dir=str(tmp_path), history_window=3)
    builder = PromptBuilder(settings)
    for moves in games(6, seed=1):
        for played in range(len(moves) + 1):
            view = make_view("".join(m for m, _ in moves[:played]), "".join(t for _, t in moves[:played]))
            assert builder.render(view) == jinja_messages(settings, view), played


def test_a_typo_inside_a_history_loop_names_the_template_and_the_variable(tmp_path: Path) -> None:
    (tmp_path / "round.j2").write_text("{% for r in history %}{{ r.yuo }}{% endfor %} C or D", encoding="utf-8")
    builder = PromptBuilder(PromptSettings(template_dir=str(tmp_path)))
    builder.render(make_view())  # no rows yet: fine
    with pytest.raises(
        ConfigError, match=r"'round\.j2' uses an undefined variable: 'dict object' has no attribute 'yuo'"
    ):
        builder.render(make_view("C", "D"))


@pytest.mark.parametrize(
    ("branch", "window"),
    [
        ("{% if horizon.kind == 'fixed' and round == horizon.n_rounds %}{{ last_round_typo }}{% endif %}", None),
        ("{% if rounds_hidden %}{{ hidden_typo }}{% endif %}", 3),
        ("{% if rounds_hidden %}{{ hidden_typo }}{% endif %}", 40),
        ("{% if rounds_played == 1 %}{{ history[0].yuo }}{% endif %}", None),
    ],
)
def test_check_renders_last_round_and_hidden_history_branches(tmp_path: Path, branch: str, window: int | None) -> None:
    """A typo inside a branch that only the last round or a windowed history reaches fails at check."""
    (tmp_path / "round.j2").write_text(
        f"Round {{{{ round }}}}. {branch}\nPick {{{{ labels.cooperate }}}} or {{{{ labels.defect }}}}.\n",
        encoding="utf-8",
    )
    builder = PromptBuilder(PromptSettings(template_dir=str(tmp_path), history_window=window))
    with pytest.raises(ConfigError, match=r"round\.j2"):
        builder.check()


def test_synthetic_views_cover_last_round_and_hidden_rounds() -> None:
    for window in (None, 1, 5, 12):
        views = synthetic_views(window)
        assert any(isinstance(v.horizon, FixedHorizonInfo) and v.horizon.n_rounds == v.round for v in views)
        assert {v.seat for v in views} == {"a", "b"}
        assert {v.horizon.kind for v in views} == set(HorizonKind)
        if window is not None:
            assert any(len(v.own_moves) > window for v in views)
        outcomes = {(a, b) for v in views for a, b in zip(v.own_moves, v.opponent_moves, strict=True)}
        assert outcomes == {("C", "C"), ("C", "D"), ("D", "C"), ("D", "D")}
