"""The words a model sees: the chat messages of each round, rendered from the Jinja templates in
``prompts/`` (and the user's ``template_dir``) with an optional persona from ``personas/``.

Templates run in a bounded sandbox with ``StrictUndefined`` (:mod:`harness.players.model.prompts.sandbox`), so a
misspelt variable is an error, and :meth:`PromptBuilder.check` renders every template against
synthetic rounds when a config is validated: a typo fails before the first paid call, not in round
37 of game 200. Each template is compiled once, when the builder is made, and rendered the ordinary
way (``template.render(context)``); in a game, the shipped cached layout's round prompt is instead extended a
round at a time from its blocks (:class:`RunningPrompt`, :meth:`PromptBuilder.prompt`), to the same text.

What the templates see is built in :mod:`harness.players.model.prompts.context`; which files they come from, in
:mod:`harness.players.model.prompts.files`. Three prompt controls from the literature, each off by default:

* ``shuffle_options``: the two options are shown in an order drawn per round and seat (see
  :class:`~harness.players.model.player.LLMAgent`); the order (``CD`` or ``DC``, canonical moves, the one shown
  first first) reorders every place the templates list the options: the ``options`` variable, the
  payoff lines and the reply instructions;
  With ``shared_order`` the order is drawn per round only, the same for both players. A template that shows the
  rules in a fixed order and shuffles only the question lists the payoff lines from ``payoffs_unshuffled``;
* ``answer_format``: ``free`` (a reply naming one option), ``json`` (``{"action": "<label>"}``) or
  ``label`` (the label and nothing else), worded by the templates from ``answer_format``;
* comprehension questions (an agent setting, see :mod:`harness.players.model.comprehension`), worded by
  ``question.j2`` and asked through the round template's ``question`` variable.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate, pairwise
from pathlib import Path
from typing import Literal

from jinja2 import Template, TemplateNotFound
from jinja2.exceptions import TemplateSyntaxError, UndefinedError

from harness.errors import ConfigError
from harness.game.horizon import FixedHorizonInfo, GeometricHorizonInfo, HorizonInfo
from harness.game.rules import Action, PayoffMatrix
from harness.game.view import RoundView
from harness.players.model.parsing.policy import ParseResult, correction_message
from harness.players.model.prompts.context import (
    CACHE_BREAK,
    ORDERS,
    AnswerFormat,
    Ask,
    OptionOrder,
    PromptLayout,
    PromptSettings,
    first_shown,
    number_text,
    option_moves,
    payoff_outcomes,
    round_context,
)
from harness.players.model.prompts.files import (
    PERSONAS_DIR,
    PROMPTS_DIR,
    available_personas,
    find_persona,
    persona_dirs,
    prompt_environment,
    read_persona_file,
    template_dirs,
)
from harness.players.model.prompts.sandbox import BoundedTemplate, RenderLimitError
from harness.players.model.settings import ReplyReader
from harness.providers.base import Message, PromptFacts, QuestionFacts

__all__ = [
    "CHECK_WINDOW",
    "ORDERS",
    "PERSONAS_DIR",
    "PROMPTS_DIR",
    "AnswerFormat",
    "Ask",
    "OptionOrder",
    "Prompt",
    "PromptBuilder",
    "PromptLayout",
    "PromptSettings",
    "RunningPrompt",
    "available_personas",
    "number_text",
    "payoff_outcomes",
    "round_context",
    "shared_start",
    "synthetic_views",
]

CHECK_WINDOW = 3  # check() renders a history window this long: the template branches are the same for any
PREFIX_ROUNDS = 6  # prefix_problem() plays this many rounds past any history window


@dataclass(frozen=True, slots=True)
class Prompt:
    """The chat messages of one request and where in them a prefix that later rounds repeat ends: (index of
    the message, character offset into its content), one per ``{{ cache_break }}`` the template wrote (see
    :class:`~harness.providers.base.CacheHints`)."""

    messages: list[Message]
    breaks: tuple[tuple[int, int], ...] = ()


@dataclass(slots=True)
class RunningPrompt:
    """One game's round prompt so far, from one seat (its player owns it): the rules and the history lines up to
    the last round it was rendered for (``rows`` lines), so that the next round adds one line, not the whole
    history again (see :meth:`PromptBuilder.prompt`)."""

    text: str = ""
    rows: int = 0


class PromptBuilder:
    """Loads the templates and persona once, then renders the chat messages for each round."""

    def __init__(self, settings: PromptSettings | None = None) -> None:
        self.settings = settings or PromptSettings()
        classic = self.settings.layout is PromptLayout.CLASSIC
        self._template_dirs = template_dirs(self.settings.template_dir, classic=classic)
        self._persona_dirs = persona_dirs(self._template_dirs)
        self._env = prompt_environment(self._template_dirs, self._persona_dirs)
        self._system = self._load(self.settings.system_template)
        self._round = self._load(self.settings.round_template)
        self._question: Template | None = None  # loaded when first needed: most players are asked nothing
        self._persona = self._load_persona(self.settings.persona)
        # The shipped cached layout, without a history window, is rendered a block at a time (see prompt).
        self._extends = self._shipped_as == "round.j2" and self.settings.history_window is None

    @cached_property
    def _shipped_as(self) -> str | None:
        """The round template's path within the shipped ``prompts/`` (``round.j2``, ``classic/round.j2``,
        ``suites/payne2025/round.j2``: a shipped folder may be named as ``template_dir`` too), or None when it is
        the user's own."""
        filename = self._round.filename
        if filename is None:
            return None
        path, shipped = Path(filename).resolve(), PROMPTS_DIR.resolve()
        return path.relative_to(shipped).as_posix() if path.is_relative_to(shipped) else None

    @cached_property
    def layout_name(self) -> str:
        """What ``calls.prompt_layout`` records of the prompts this builder renders: the layout (``cached`` or
        ``classic``) when the shipped ``round.j2`` words them; the template's name when another shipped template
        does (a suite's, ``suites/akata2023/round.j2``); ``own: <name>`` when the user's ``template_dir``
        supplies it (its layout is whatever the user wrote)."""
        shipped = self._shipped_as
        if shipped is None:
            return f"own: {self.settings.round_template}"
        return {"round.j2": PromptLayout.CACHED.value, "classic/round.j2": PromptLayout.CLASSIC.value}.get(
            shipped, shipped
        )

    # -- rendering ---------------------------------------------------------------------------
    def render(self, view: RoundView, order: OptionOrder = "CD") -> list[Message]:
        """The system and user messages for ``view`` with the options in ``order``; identical inputs
        give identical messages."""
        return self.prompt(view, order).messages

    def prompt(self, view: RoundView, order: OptionOrder = "CD", running: RunningPrompt | None = None) -> Prompt:
        """:meth:`render`'s messages, with where their reusable prefixes end.

        With ``running`` (the game's prompt so far, from this seat), the shipped cached layout is not rendered
        whole each round: its ``round.j2`` is three blocks and nothing else (the rules, the history, the ending),
        so its text is theirs joined; and the history block of one more round is the last one's with one more
        ``history_line`` block. So the rules and history are rendered once, then extended by one line a round,
        and only the ending is rendered anew: the same text (tests/unit/test_prompt_running.py compares them
        byte for byte), at a cost that does not grow with the game. Any other template is rendered whole."""
        return self._prompt(round_context(view, self.settings, order), running)

    def render_question(self, view: RoundView, ask: Ask, order: OptionOrder = "CD") -> list[Message]:
        """The messages of one comprehension question: the system prompt and the round's prompt as the
        player sees it before its move, the question (``question.j2``) in place of the request for a move."""
        return self.question_prompt(view, ask, order).messages

    def question_prompt(self, view: RoundView, ask: Ask, order: OptionOrder = "CD") -> Prompt:
        """:meth:`render_question`'s messages, with where their reusable prefixes end (the round's own)."""
        context = round_context(view, self.settings, order)
        context["ask"] = ask.context()
        context["question"] = self._render(self._question_template(), context)
        return self._prompt(context)

    def _messages(self, context: dict[str, object]) -> list[Message]:
        return self._prompt(context).messages

    def _prompt(self, context: dict[str, object], running: RunningPrompt | None = None) -> Prompt:
        """The system message, then the user message; a system template that renders nothing sends no system
        message, so a protocol that puts everything in one user message (Akata et al. 2023) is played as such.
        The user message is cut where the template wrote ``{{ cache_break }}``; the marks are removed."""
        context["persona"] = self._render(self._persona, context) if self._persona is not None else None
        system = self._render(self._system, context).replace(CACHE_BREAK, "")
        parts = self._user(context, running).split(CACHE_BREAK)
        user: Message = {"role": "user", "content": "".join(parts)}
        messages: list[Message] = [{"role": "system", "content": system}, user] if system else [user]
        end = len(user["content"])
        index = len(messages) - 1
        return Prompt(messages, tuple((index, at) for at in accumulate(len(p) for p in parts[:-1]) if 0 < at < end))

    def _user(self, context: dict[str, object], running: RunningPrompt | None) -> str:
        """The round template's text: whole, or from ``running`` extended to this round (see :meth:`prompt`)."""
        if running is None or not self._extends:
            return self._render(self._round, context)
        played = context["rounds_played"]
        history = context["history"]
        assert isinstance(played, int) and isinstance(history, list)  # round_context's
        if running.rows and played == running.rows + 1:  # the next round: one more line
            running.text += self._render_block("history_line", {**context, "r": history[-1]})
        elif played != running.rows or not running.rows:  # the first round rendered (a resumed game's too)
            running.text = self._render_block("rules", context) + self._render_block("history", context)
        running.rows = played
        return (running.text + self._render_block("ending", context)).strip()

    def prefix_problem(self) -> str | None:
        """Why the prompts of consecutive rounds do not extend one another, or None when they do.

        A provider's prompt cache reads only the start that a request shares with an earlier one. When each
        round's prompt repeats the last one's and adds the newest round, that shared start grows every round;
        this plays a synthetic game (past any history window) and says so when it stops growing, naming the
        setting that stops it."""
        window = self.settings.history_window or 0
        rounds = window + PREFIX_ROUNDS
        shuffled = self.settings.shuffle_options
        views = game_views(rounds)
        texts = [
            "\n\n".join(m["content"] for m in self.render(view, ORDERS[view.round % 2] if shuffled else "CD"))
            for view in views
        ]
        shared = [shared_start(a, b) for a, b in pairwise(texts)]
        if _grows(shared):
            return None
        if self.settings.layout is PromptLayout.CLASSIC:
            cause = "the classic layout starts every round's prompt with the round number"
        elif window and _grows(shared[:window]):
            cause = f"the history window ({window} rounds) drops the oldest round from the history's start every round"
        elif shuffled and not self._reads_alike_shuffled(views[-1]):
            cause = "shuffle_options reorders the rules (the payoff lines or the system prompt), not only the question"
        else:
            cause = f"the round template ({self.settings.round_template!r}) changes its start from round to round"
        return (
            f"each round's prompt does not extend the last one's ({cause}), so a provider's prompt cache can read "
            f"at most the first {min(shared):,} characters of a prompt; with prompts.layout: cached and no "
            "history_window it reads all but the newest round"
        )

    def _reads_alike_shuffled(self, view: RoundView) -> bool:
        """Whether the prompt before its last paragraph (the question) is the same in both option orders."""
        one, other = (self.render(view, order)[-1]["content"].rsplit("\n\n", 1)[0] for order in ORDERS)
        return one == other

    def facts(self, view: RoundView, order: OptionOrder = "CD", ask: Ask | None = None) -> PromptFacts:
        """What the prompt for ``view`` tells the model, for stand-in models (see PromptFacts)."""
        labels = self.settings.labels
        start = first_shown(len(view.own_moves), self.settings)
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
                kind=ask.kind,
                expected=ask.expected,
                probability=ask.kind == "horizon" and isinstance(view.horizon, GeometricHorizonInfo),
            ),
        )

    def reask(self, result: ParseResult, order: OptionOrder = "CD", reader: ReplyReader = ReplyReader.FREE_TEXT) -> str:
        """The correction sent after an unreadable move: asks again in the configured reply format, naming
        the options in the order they were shown. The default (free text, options in the order C, D) is
        the parser's own :func:`~harness.players.model.parsing.policy.correction_message`. Under the last-line
        reader a one-letter reply is unreadable, so it asks for reasoning and then the label on the last line."""
        labels = self.settings.labels
        fmt = self.settings.answer_format
        first, second = (labels.label(m) for m in option_moves(order))
        head = f"I could not tell your move: {result.reason}." if result.reason else "I could not tell your move."
        if reader is ReplyReader.LAST_LINE:
            return f"{head} Give your reasoning first, then {first} or {second} alone on the last line."
        if fmt == "free" and order == "CD":
            return correction_message(result, labels)
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
        orders: tuple[OptionOrder, ...] = ORDERS if self.settings.shuffle_options else ("CD",)
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
            asks = [
                Ask(
                    kind="payoff", you=self.settings.labels.cooperate, they=self.settings.labels.defect, expected="0,0"
                ),
                Ask(kind="horizon", expected="0"),
            ]
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
        """A persona is a name from the persona folders or the path of a ``.md`` file (see find_persona)."""
        if persona is None:
            return None
        found = find_persona(persona, self._persona_dirs)
        if isinstance(found, str):
            return self._load(found)
        text = read_persona_file(found)
        try:
            return self._env.from_string(text)
        except TemplateSyntaxError as exc:
            raise ConfigError(
                f"persona file {str(found)!r} has a syntax error at line {exc.lineno}: {exc.message}"
            ) from exc

    def _render(self, template: Template, context: dict[str, object]) -> str:
        """Render, turning any template failure into a ConfigError that names template and cause."""
        return self._rendered(template, lambda: template.render(context).strip(), context)

    def _render_block(self, name: str, context: dict[str, object]) -> str:
        """One block of the round template (see :meth:`prompt`), unstripped: it is joined to the others."""
        template = self._round
        assert isinstance(template, BoundedTemplate)  # the bounded environment's
        return self._rendered(template, lambda: template.render_block(name, context), context)

    def _rendered(self, template: Template, render: Callable[[], str], context: dict[str, object]) -> str:
        try:
            return render()
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


def _grows(values: list[int]) -> bool:
    return all(later > earlier for earlier, later in pairwise(values))


def shared_start(a: str, b: str) -> int:
    """How many leading characters two texts share."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def game_views(
    rounds: int,
    *,
    matrix: PayoffMatrix | None = None,
    horizon: HorizonInfo | None = None,
    seat: Literal["a", "b"] = "a",
) -> list[RoundView]:
    """Rounds 1 to ``rounds`` of one synthetic game (by default: fixed-length, seat a, the default payoffs),
    every joint outcome in turn."""
    cycle: tuple[Action, ...] = ("C", "C", "D", "D", "C")
    cycle_opp: tuple[Action, ...] = ("C", "D", "C", "D", "C")
    info = horizon or FixedHorizonInfo(n_rounds=rounds)
    matrix = matrix or PayoffMatrix()
    table = matrix.table()
    own = tuple(cycle[i % len(cycle)] for i in range(rounds))
    opp = tuple(cycle_opp[i % len(cycle_opp)] for i in range(rounds))
    pairs = [table[(a, b)] if seat == "a" else table[(b, a)][::-1] for a, b in zip(own, opp, strict=True)]
    own_p = tuple(p[0] for p in pairs)
    opp_p = tuple(p[1] for p in pairs)
    return [
        RoundView(
            seat,
            r,
            info,
            matrix,
            own[: r - 1],
            opp[: r - 1],
            own_p[: r - 1],
            opp_p[: r - 1],
            sum(own_p[: r - 1]),
            sum(opp_p[: r - 1]),
        )
        for r in range(1, rounds + 1)
    ]


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
    fixed = FixedHorizonInfo(n_rounds=10)
    fixed_long = FixedHorizonInfo(n_rounds=longest)
    geometric = GeometricHorizonInfo(continuation_prob=0.95)
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
