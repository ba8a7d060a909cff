"""The words a model sees: Jinja templates in ``prompts/`` and personas in ``personas/``.

Templates run in a sandbox with ``StrictUndefined``, so a misspelt variable is an error, and
:meth:`PromptBuilder.check` renders every template against synthetic rounds when a config is
validated: a typo fails before the first paid call, not in round 37 of game 200.

Only actions cross between players: the template context is built from a
:class:`~harness.agents.base.RoundView` (moves, payoffs, scores), never from another
model's text. The wording is driven by the configured labels, so neutral labels (J/F)
produce prompts that never say "cooperate" or "defect".

Three prompt controls from the literature, each off by default:

* ``shuffle_options``: the two options are shown in an order drawn per round and seat (see
  :class:`~harness.agents.llm.LLMAgent`); the order (``CD`` or ``DC``, canonical moves, the one shown
  first first) reorders every place the templates list the options: the ``options`` variable, the
  payoff lines and the reply instructions;
* ``answer_format``: ``free`` (a reply naming one option), ``json`` (``{"action": "<label>"}``) or
  ``label`` (the label and nothing else), worded by the templates from ``answer_format``;
* comprehension questions (an agent setting, see :mod:`harness.comprehension`), worded by
  ``question.j2`` and asked through the round template's ``question`` variable.

Templates are compiled once per builder and rendered the ordinary way, in a sandbox that bounds what
one render may build and how long it may take (:mod:`harness.template_bounds`). Only files meant to be
prompts are read: templates and personas are regular files of at most 1 MB, never dotfiles (a
``.env`` holds keys), and a persona given as a path must be a ``.md`` file.
"""

from __future__ import annotations

import copy
import os
import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from jinja2 import ChoiceLoader, FileSystemLoader, PrefixLoader, StrictUndefined, Template, TemplateNotFound
from jinja2.exceptions import TemplateSyntaxError, UndefinedError
from jinja2.loaders import split_template_path
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from harness.agents.base import RoundView
from harness.errors import ConfigError
from harness.game import MAX_ROUNDS, Action, HorizonInfo, PayoffMatrix
from harness.parsing import ActionLabels, ParseResult, correction_message
from harness.providers.base import Message, PromptFacts, QuestionFacts
from harness.template_bounds import BoundedEnvironment, RenderLimitError
from harness.userfiles import read_user_file

_ROOT = Path(__file__).resolve().parents[1]
PROMPTS_DIR = _ROOT / "prompts"
PERSONAS_DIR = _ROOT / "personas"
MAX_PERSONA_NAME = 100
_PERSONA_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_-]{{0,{MAX_PERSONA_NAME - 1}}}")
CHECK_WINDOW = 3  # check() renders a history window this long: the template branches are the same for any

OptionOrder = Literal["CD", "DC"]
AnswerFormat = Literal["free", "json", "label"]
ORDERS: tuple[OptionOrder, OptionOrder] = ("CD", "DC")
_WORDS = {"C": "cooperate", "D": "defect"}


class PromptSettings(BaseModel):
    """Which templates and persona to use, how much history to show, what the moves are called, in
    which order the options are shown and in which form the model is asked to reply."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system_template: str = "system.j2"
    round_template: str = "round.j2"
    question_template: str = "question.j2"
    template_dir: str | None = None
    persona: str | None = None
    history_window: StrictInt | None = Field(default=None, ge=1, le=MAX_ROUNDS)
    labels: ActionLabels = Field(default_factory=ActionLabels)
    shuffle_options: StrictBool = Field(
        False, description="show the two options in a seeded random order, drawn per round and seat"
    )
    answer_format: AnswerFormat = Field(
        "free", description="free (a reply naming one option), json ({'action': label}) or label (the label only)"
    )


class Ask(BaseModel):
    """One comprehension question as the question template sees it (variable ``ask``)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["payoff", "horizon", "last_move"]
    you: str | None = None  # payoff: your option's label
    they: str | None = None  # payoff: the other player's option's label
    round: int | None = None  # last_move: the round asked about
    expected: str  # canonical right answer (see QuestionFacts); not shown to templates

    def context(self) -> dict[str, object]:
        return {"kind": self.kind, "you": self.you, "they": self.they, "round": self.round}


def round_context(view: RoundView, settings: PromptSettings, order: OptionOrder = "CD") -> dict[str, object]:
    """Every variable the templates may use, from one player's own perspective, with the options in
    ``order`` (the canonical move shown first, then the other)."""
    labels = settings.labels
    played = len(view.own_moves)
    start = _first_shown(played, settings)
    return {
        "round": view.round,
        "rounds_played": played,
        "labels": {"cooperate": labels.cooperate, "defect": labels.defect},
        "use_words": labels.uses_words,
        "options": [{"label": labels.label(m), "word": _WORDS[m]} for m in _moves(order)],  # type: ignore[arg-type]
        "answer_format": settings.answer_format,
        "horizon": _horizon(view.horizon),
        "payoffs": _payoff_rows(view.payoffs, view.seat, labels, order),
        "history": _history_rows(view, labels, start, played),
        "rounds_hidden": start,
        "your_score": number_text(view.own_score),
        "their_score": number_text(view.opponent_score),
        "question": None,
        "ask": None,
    }


def _moves(order: OptionOrder) -> tuple[Action, Action]:
    return ("C", "D") if order == "CD" else ("D", "C")


def _first_shown(played: int, settings: PromptSettings) -> int:
    """Index of the first played round the history shows."""
    return 0 if settings.history_window is None else max(0, played - settings.history_window)


def _history_rows(view: RoundView, labels: ActionLabels, start: int, stop: int) -> list[dict[str, object]]:
    """The history rows of rounds ``start + 1`` to ``stop``."""
    own, opp, own_p, opp_p = view.own_moves, view.opponent_moves, view.own_payoffs, view.opponent_payoffs
    return [
        {
            "round": i + 1,
            "you": labels.label(own[i]),
            "they": labels.label(opp[i]),
            "you_got": number_text(own_p[i]),
            "they_got": number_text(opp_p[i]),
        }
        for i in range(start, stop)
    ]


def number_text(x: float) -> str:
    """A number as prompts show it: 3.0 -> "3", 2.5 -> "2.5" (models read "3" more naturally than "3.0")."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _horizon(info: HorizonInfo) -> dict[str, object]:
    """What the player may know: the length of a fixed game, only the odds of a geometric one."""
    if info.kind == "fixed":
        return {"kind": "fixed", "n_rounds": info.n_rounds}
    prob = info.continuation_prob
    return {"kind": "geometric", "continuation_prob": None if prob is None else number_text(prob)}


def payoff_outcomes(
    payoffs: PayoffMatrix, seat: str, order: OptionOrder = "CD"
) -> list[tuple[Action, Action, float, float]]:
    """The four joint outcomes as (your move, their move, your points, their points) for ``seat``, in the
    order the options are shown: (first, first), (first, second), (second, first), (second, second)."""
    table = payoffs.table()
    moves = _moves(order)
    out = []
    for mine in moves:
        for theirs in moves:
            if seat == "a":
                you_get, they_get = table[(mine, theirs)]
            else:
                they_get, you_get = table[(theirs, mine)]
            out.append((mine, theirs, you_get, they_get))
    return out


def _payoff_rows(payoffs: PayoffMatrix, seat: str, labels: ActionLabels, order: OptionOrder) -> list[dict[str, str]]:
    return [
        {
            "you": labels.label(mine),
            "they": labels.label(theirs),
            "you_get": number_text(you),
            "they_get": number_text(they),
        }
        for mine, theirs, you, they in payoff_outcomes(payoffs, seat, order)
    ]


class PromptBuilder:
    """Loads the templates and persona once, then renders the chat messages for each round."""

    def __init__(self, settings: PromptSettings | None = None) -> None:
        self.settings = settings or PromptSettings()
        self._template_dirs = _template_dirs(self.settings)
        self._persona_dirs = [d / "personas" for d in self._template_dirs if (d / "personas").is_dir()]
        if PERSONAS_DIR.is_dir():
            self._persona_dirs.append(PERSONAS_DIR)
        self._env = BoundedEnvironment(
            loader=ChoiceLoader(
                [
                    PrefixLoader({"personas": _PromptFileLoader(self._persona_dirs)}),
                    _PromptFileLoader(self._template_dirs),
                ]
            ),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,
        )
        self._system = self._load(self.settings.system_template)
        self._round = self._load(self.settings.round_template)
        self._question: Template | None = None  # loaded when first needed: most players are asked nothing
        self._persona = self._load_persona(self.settings.persona)

    # -- rendering ---------------------------------------------------------------------------
    def render(self, view: RoundView, order: OptionOrder = "CD") -> list[Message]:
        """The system and user messages for ``view`` with the options in ``order``; identical inputs
        give identical messages."""
        return self._messages(round_context(view, self.settings, order))

    def render_question(self, view: RoundView, ask: Ask, order: OptionOrder = "CD") -> list[Message]:
        """The messages of one comprehension question: the system prompt and the round's prompt as the
        player sees it before its move, the question (``question.j2``) in place of the request for a move."""
        context = round_context(view, self.settings, order)
        context["ask"] = ask.context()
        context["question"] = self._render(self._question_template(), context)
        return self._messages(context)

    def _messages(self, context: dict[str, object]) -> list[Message]:
        context["persona"] = self._render(self._persona, context) if self._persona is not None else None
        return [
            {"role": "system", "content": self._render(self._system, context)},
            {"role": "user", "content": self._render(self._round, context)},
        ]

    def facts(self, view: RoundView, order: OptionOrder = "CD", ask: Ask | None = None) -> PromptFacts:
        """What the prompt for ``view`` tells the model, for stand-in models (see PromptFacts)."""
        labels = self.settings.labels
        start = _first_shown(len(view.own_moves), self.settings)
        return PromptFacts(
            cooperate=labels.cooperate,
            defect=labels.defect,
            option_order=order,
            answer_format=self.settings.answer_format,
            own_moves=tuple(view.own_moves[start:]),
            opponent_moves=tuple(view.opponent_moves[start:]),
            question=None
            if ask is None
            else QuestionFacts(
                kind=ask.kind, expected=ask.expected, horizon=view.horizon.kind if ask.kind == "horizon" else None
            ),
        )

    def reask(self, result: ParseResult, order: OptionOrder = "CD") -> str:
        """The correction sent after an unreadable move: asks again in the configured reply format, naming
        the options in the order they were shown. The default (free text, options in the order C, D) is
        the parser's own :func:`~harness.parsing.correction_message`."""
        labels = self.settings.labels
        fmt = self.settings.answer_format
        if fmt == "free" and order == "CD":
            return correction_message(result, labels)
        first, second = (labels.label(m) for m in _moves(order))
        head = f"I could not tell your move: {result.reason}." if result.reason else "I could not tell your move."
        if fmt == "json":
            return f'{head} Reply with only a JSON object: {{"action": "{first}"}} or {{"action": "{second}"}}.'
        if fmt == "label":
            return f"{head} Reply with only {first} or {second}, a single label and nothing else."
        words = {labels.cooperate: "to cooperate", labels.defect: "to defect"}
        if labels.uses_words:
            return f"{head} Reply with exactly one letter: {first} {words[first]} or {second} {words[second]}."
        return f"{head} Reply with exactly one of {first} or {second}."

    # -- checks ------------------------------------------------------------------------------
    def check(self, *, questions: bool = False) -> None:
        """Render every template against synthetic rounds; raise ConfigError on the first problem.

        Beyond variables that do not exist, it refuses templates that would silently defeat a setting:
        a round prompt that never shows a label, one that reads the same whichever option is shown
        first (with ``shuffle_options``) or whatever reply format is asked (with ``answer_format``),
        and, with ``questions``, one that never shows the comprehension question.

        A history window longer than :data:`CHECK_WINDOW` is checked as that long: the templates see
        the same variables and take the same branches, and the synthetic rounds stay few.
        """
        window = self.settings.history_window
        if window is not None and window > CHECK_WINDOW:
            probe = copy.copy(self)
            probe.settings = self.settings.model_copy(update={"history_window": CHECK_WINDOW})
            probe.check(questions=questions)
            return
        labels = self.settings.labels
        views = synthetic_views(self.settings.history_window)
        orders = ORDERS if self.settings.shuffle_options else ("CD",)
        for order in orders:
            for view in views:
                prompt = self.render(view, order)[-1]["content"]
                missing = [label for label in (labels.cooperate, labels.defect) if not _mentions(prompt, label)]
                if missing:
                    raise ConfigError(
                        f"prompt template {self.settings.round_template!r} never shows the label(s) "
                        f"{', '.join(missing)}, so the model cannot know how to answer: "
                        "use {{ labels.cooperate }} and {{ labels.defect }} (or {{ options }}) in it"
                    )
        view = views[0]
        if self.settings.shuffle_options and self.render(view, "CD") == self.render(view, "DC"):
            raise ConfigError(
                f"shuffle_options is on, but the prompt templates ({self.settings.system_template!r}, "
                f"{self.settings.round_template!r}) read the same whichever option is shown first: list the "
                "options from {{ options }} (and the payoff lines from {{ payoffs }}), which follow the order"
            )
        if self.settings.answer_format != "free":
            free = round_context(view, self.settings)
            free["answer_format"] = "free"
            if self._messages(free) == self.render(view):
                raise ConfigError(
                    f"answer_format is {self.settings.answer_format!r}, but the prompt templates never ask for "
                    "it (they read the same as with free answers): word the reply instruction from "
                    "{{ answer_format }} (see prompts/round.j2)"
                )
        if questions:
            self._check_questions(views)

    def _check_questions(self, views: list[RoundView]) -> None:
        for view in views:
            asks = [Ask(kind="payoff", you=self.settings.labels.cooperate, they=self.settings.labels.defect,
                        expected="0,0"), Ask(kind="horizon", expected="0")]  # fmt: skip
            if view.round > 1:
                asks.append(Ask(kind="last_move", round=view.round - 1, expected="C"))
            for ask in asks:
                context = round_context(view, self.settings)
                context["ask"] = ask.context()
                question = self._render(self._question_template(), context)
                if not question:
                    raise ConfigError(
                        f"question template {self.settings.question_template!r} renders nothing for a "
                        f"{ask.kind} question: word each kind (ask.kind is payoff, horizon or last_move)"
                    )
                if question not in self.render_question(view, ask)[-1]["content"]:
                    raise ConfigError(
                        f"a comprehension check is configured, but the round template "
                        f"{self.settings.round_template!r} never shows the question: end it with "
                        "{% if question %}{{ question }}{% else %}(the request for a move){% endif %} "
                        "as prompts/round.j2 does"
                    )

    # -- loading -----------------------------------------------------------------------------
    def _question_template(self) -> Template:
        if self._question is None:
            self._question = self._load(self.settings.question_template)
        return self._question

    def _load(self, name: str) -> Template:
        try:
            return self._env.get_template(name)
        except TemplateNotFound as exc:
            folders = ", ".join(str(d) for d in self._template_dirs)
            raise ConfigError(
                f"prompt template {exc.name!r} not found in {folders}: check the name or template_dir"
            ) from exc
        except TemplateSyntaxError as exc:
            raise ConfigError(
                f"prompt template {exc.name or name!r} has a syntax error at line {exc.lineno}: {exc.message}"
            ) from exc

    def _load_persona(self, persona: str | None) -> Template | None:
        """A persona is a name from personas/ ("cooperative") or a path to a markdown (``.md``) file that is
        not a dotfile: a persona is sent to the model, so nothing else (``/etc/passwd``, ``.env``) may be."""
        if persona is None:
            return None
        if _PERSONA_NAME.fullmatch(persona):
            if any((d / f"{persona}.md").is_file() for d in self._persona_dirs):
                return self._load(f"personas/{persona}.md")
            available = ", ".join(available_personas(self._persona_dirs)) or "none"
            folders = ", ".join(str(d) for d in self._persona_dirs) or str(PERSONAS_DIR)
            raise ConfigError(
                f"unknown persona {persona!r}; available personas: {available} (looked in {folders}). "
                "Use one of these names or a path to a .md file."
            )
        path = Path(persona).expanduser()
        if path.suffix.lower() != ".md" or path.name.startswith("."):
            shown = persona if len(persona) <= 80 else persona[:77] + "..."
            raise ConfigError(
                f"persona {shown!r} is neither a persona name (letters, digits, '_' and '-', at most "
                f"{MAX_PERSONA_NAME} characters, e.g. cooperative) nor the path of a markdown file (ending in .md, "
                "not a dotfile): the persona's text is sent to the model, so only persona files are read"
            )
        where = f"persona file {str(path)!r}"
        try:
            text = read_user_file(path, "persona file")
        except FileNotFoundError:
            raise ConfigError(f"{where} does not exist: give a persona name or a path to a .md file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read {where}: {_os_reason(exc)}; give a readable .md file") from None
        try:
            return self._env.from_string(text)
        except TemplateSyntaxError as exc:
            raise ConfigError(f"{where} has a syntax error at line {exc.lineno}: {exc.message}") from exc

    def _render(self, template: Template, context: dict[str, object]) -> str:
        """Render, turning any template failure into a ConfigError that names template and cause."""
        try:
            return template.render(context).strip()
        except RenderLimitError as exc:
            raise ConfigError(f"prompt template {template.name or 'persona'!r} {exc}") from None
        except UndefinedError as exc:
            variables = ", ".join(sorted(context))
            raise ConfigError(
                f"prompt template {template.name or 'persona'!r} uses an undefined variable: {exc.message}. "
                f"Available variables: {variables}"
            ) from exc
        except Exception as exc:
            raise ConfigError(f"prompt template {template.name or 'persona'!r} failed to render: {exc}") from exc


def _template_dirs(settings: PromptSettings) -> list[Path]:
    """The user's folder first (its templates override the shipped ones), then the repo's prompts/."""
    dirs: list[Path] = []
    if settings.template_dir is not None:
        user = Path(settings.template_dir).expanduser()
        try:
            is_dir = user.is_dir()
        except OSError as exc:  # a name too long, a loop of links
            raise ConfigError(f"prompt template_dir {str(user)[:200]!r} cannot be used: {_os_reason(exc)}") from None
        if not is_dir:
            raise ConfigError(f"prompt template_dir {str(user)!r} is not a folder: create it or fix the path")
        dirs.append(user)
    if PROMPTS_DIR.is_dir():
        dirs.append(PROMPTS_DIR)
    elif not dirs:
        raise ConfigError(
            f"the prompt templates folder was not found: looked for {PROMPTS_DIR}. "
            "Reinstall PDBench from its repository (pip install -e .) or set template_dir"
        )
    return dirs


def _os_reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


class _PromptFileLoader(FileSystemLoader):
    """Jinja's file loader, reading only what may be a prompt: no dotfile (``.env`` holds keys), no
    device or pipe, nothing over 1 MB (see :func:`harness.userfiles.read_user_file`)."""

    def get_source(self, environment: Any, template: str) -> tuple[str, str, Callable[[], bool]]:
        pieces = split_template_path(template)
        if any(piece.startswith(".") for piece in pieces):
            raise ConfigError(
                f"prompt template {template!r} is a dotfile; templates are sent to the model, and dotfiles "
                "(.env) hold settings and keys: name a template file that does not start with '.'"
            )
        for folder in self.searchpath:
            filename = posixpath.join(folder, *pieces)
            if os.path.isfile(filename):
                break
        else:
            raise TemplateNotFound(template)
        try:
            text = read_user_file(Path(filename), "prompt template")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read prompt template {filename}: {_os_reason(exc)}") from None
        mtime = os.path.getmtime(filename)
        return text, os.path.normpath(filename), lambda: _mtime(filename) == mtime


def _mtime(filename: str) -> float | None:
    try:
        return os.path.getmtime(filename)
    except OSError:
        return None


def available_personas(dirs: list[Path] | None = None) -> list[str]:
    """Persona names (file stems) in the given folders, or in the repo's personas/."""
    folders = [PERSONAS_DIR] if dirs is None else dirs
    return sorted({p.stem for d in folders if d.is_dir() for p in d.glob("*.md")})


def _mentions(text: str, label: str) -> bool:
    return re.search(rf"(?<![^\W_]){re.escape(label)}(?![^\W_])", text) is not None


def synthetic_views(history_window: int | None = None) -> list[RoundView]:
    """Rounds that make every template branch run, under both horizon kinds and both seats.

    Round 1 (empty history), round 2 (one round played), round 5, the last round of a fixed
    game (``round == horizon.n_rounds``) and, with a history window, a round whose history
    has rounds hidden (``rounds_hidden > 0``); every joint outcome appears in the history.
    """
    cycle: tuple[Action, ...] = ("C", "C", "D", "D", "C")
    cycle_opp: tuple[Action, ...] = ("C", "D", "C", "D", "C")
    longest = max(10, (history_window or 0) + 4)
    fixed = HorizonInfo(kind="fixed", n_rounds=10, continuation_prob=None)
    fixed_long = HorizonInfo(kind="fixed", n_rounds=longest, continuation_prob=None)
    geometric = HorizonInfo(kind="geometric", n_rounds=None, continuation_prob=0.95)
    matrix = PayoffMatrix()
    table = matrix.table()

    def view(seat: Literal["a", "b"], round_: int, horizon: HorizonInfo) -> RoundView:
        played = round_ - 1
        own = tuple(cycle[i % len(cycle)] for i in range(played))
        opp = tuple(cycle_opp[i % len(cycle_opp)] for i in range(played))
        own_p = tuple(table[(a, b)][0] for a, b in zip(own, opp, strict=True))
        opp_p = tuple(table[(a, b)][1] for a, b in zip(own, opp, strict=True))
        return RoundView(seat, round_, horizon, matrix, own, opp, own_p, opp_p, sum(own_p), sum(opp_p))

    views = []
    for horizon in (fixed, geometric):
        views += [view("a", 1, horizon), view("b", 2, horizon), view("b", 5, horizon)]
    views.append(view("a", 10, fixed))
    if longest > 10:
        views += [view("b", longest, fixed_long), view("a", longest, geometric)]
    return views
