"""The words a model sees: Jinja templates in ``prompts/`` and personas in ``personas/``.

Templates run in a sandbox with ``StrictUndefined``, so a misspelt variable is an error, and
:meth:`PromptBuilder.check` renders every template against synthetic rounds when a config is
validated: a typo fails before the first paid call, not in round 37 of game 200.

Only actions cross between players: the template context is built from a
:class:`~harness.agents.base.RoundView` (moves, payoffs, scores), never from another
model's text. The wording is driven by the configured labels, so neutral labels (J/F)
produce prompts that never say "cooperate" or "defect".

Rendering is on the path of every model call, so it avoids redoing work (see
:class:`_Renderer`): the system prompt and persona are rendered once per setting, and the
history grows by one row a round instead of being rendered again. Templates stay ordinary,
user-replaceable Jinja, and the text is exactly what Jinja renders from them: whatever the
shortcuts cannot prove safe for a template is rendered plainly.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Literal

from jinja2 import (
    ChoiceLoader,
    FileSystemLoader,
    PrefixLoader,
    StrictUndefined,
    Template,
    TemplateNotFound,
    meta,
    nodes,
)
from jinja2.exceptions import TemplateSyntaxError, UndefinedError
from jinja2.sandbox import SandboxedEnvironment
from pydantic import BaseModel, ConfigDict, Field

from harness.agents.base import RoundView
from harness.errors import ConfigError
from harness.game import Action, HorizonInfo, PayoffMatrix
from harness.parsing import ActionLabels

_ROOT = Path(__file__).resolve().parents[1]
PROMPTS_DIR = _ROOT / "prompts"
PERSONAS_DIR = _ROOT / "personas"
_PERSONA_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


class _DictFirstSandbox(SandboxedEnvironment):
    """The sandbox, but ``r.round`` on a dict looks up the key first. Jinja tries the Python attribute
    first and falls back to the key through an exception, which made rendering a long history the
    costliest step of a model call."""

    def getattr(self, obj: object, attribute: str) -> object:
        if type(obj) is dict and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)


class PromptSettings(BaseModel):
    """Which templates and persona to use, how much history to show, and what the moves are called."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system_template: str = "system.j2"
    round_template: str = "round.j2"
    template_dir: str | None = None
    persona: str | None = None
    history_window: int | None = Field(default=None, ge=1)
    labels: ActionLabels = Field(default_factory=ActionLabels)


def round_context(view: RoundView, settings: PromptSettings) -> dict[str, object]:
    """Every variable the templates may use, from one player's own perspective."""
    played = len(view.own_moves)
    start = _first_shown(played, settings)
    return _context(view, settings, _history_rows(view, settings.labels, start, played), start)


def _first_shown(played: int, settings: PromptSettings) -> int:
    """Index of the first played round the history shows."""
    return 0 if settings.history_window is None else max(0, played - settings.history_window)


def _history_rows(view: RoundView, labels: ActionLabels, start: int, stop: int) -> list[dict[str, object]]:
    """The history rows of rounds ``start + 1`` to ``stop``."""
    cooperate, defect = labels.cooperate, labels.defect
    num = _num
    own, opp, own_p, opp_p = view.own_moves, view.opponent_moves, view.own_payoffs, view.opponent_payoffs
    return [
        {
            "round": i + 1,
            "you": cooperate if own[i] == "C" else defect,  # ActionLabels.label, inlined: it runs for every row
            "they": cooperate if opp[i] == "C" else defect,
            "you_got": num(own_p[i]),
            "they_got": num(opp_p[i]),
        }
        for i in range(start, stop)
    ]


def _context(
    view: RoundView, settings: PromptSettings, history: list[dict[str, object]], start: int
) -> dict[str, object]:
    labels = settings.labels
    played = len(view.own_moves)
    return {
        "round": view.round,
        "rounds_played": played,
        "labels": {"cooperate": labels.cooperate, "defect": labels.defect},
        "use_words": labels.uses_words,
        "horizon": _horizon(view.horizon),
        "payoffs": _payoff_rows(view.payoffs, view.seat, labels),
        "history": history,
        "rounds_hidden": start,
        "your_score": _num(view.own_score),
        "their_score": _num(view.opponent_score),
    }


_NUMS: dict[float, str] = {}  # what _num said: a game has a handful of distinct payoffs and scores


def _num(x: float) -> str:
    """3.0 -> "3", 2.5 -> "2.5": models read "3" more naturally than "3.0"."""
    try:
        return _NUMS[x]
    except KeyError:
        text = str(int(x)) if float(x).is_integer() else f"{x:g}"
        if type(x) in (int, float) and len(_NUMS) < 4096:
            _NUMS[x] = text
        return text


def _horizon(info: HorizonInfo) -> dict[str, object]:
    """What the player may know: the length of a fixed game, only the odds of a geometric one."""
    if info.kind == "fixed":
        return {"kind": "fixed", "n_rounds": info.n_rounds}
    prob = info.continuation_prob
    return {"kind": "geometric", "continuation_prob": None if prob is None else _num(prob)}


def _payoff_rows(payoffs: PayoffMatrix, seat: str, labels: ActionLabels) -> list[dict[str, str]]:
    """The four outcomes as (your move, their move, your points, their points) for this seat."""
    return [dict(row) for row in _payoff_table(payoffs, seat, labels.cooperate, labels.defect)]  # fresh each time


@functools.lru_cache(maxsize=64)
def _payoff_table(payoffs: PayoffMatrix, seat: str, cooperate: str, defect: str) -> tuple[dict[str, str], ...]:
    table = payoffs.table()
    rows = []
    moves: tuple[Action, Action] = ("C", "D")
    label = {"C": cooperate, "D": defect}
    for mine in moves:
        for theirs in moves:
            if seat == "a":
                you_get, they_get = table[(mine, theirs)]
            else:
                they_get, you_get = table[(theirs, mine)]
            rows.append(
                {"you": label[mine], "they": label[theirs], "you_get": _num(you_get), "they_get": _num(they_get)}
            )
    return tuple(rows)


# Variables that change from round to round: a template that uses none of them renders the same
# text all game long (the system prompt, a persona), so its text is kept rather than rendered again.
_PER_ROUND = frozenset({"round", "rounds_played", "history", "rounds_hidden", "your_score", "their_score"})
_ABSENT = object()


class _Renderer:
    """One loaded template, rendered with less per-call overhead than ``Template.render``, same text.

    * The context is built directly from a copy of the template's globals made once (``render``
      rebuilds it from a ``ChainMap`` of globals every time, which cost as much as rendering a
      short template).
    * A template that uses none of the per-round variables (see ``_PER_ROUND``) and nothing whose
      output could vary by itself (``random``, ``lipsum``, other templates) keeps its text for each
      combination of the values it reads, so the system prompt is rendered once per game setting.
    * A ``{% for r in history %}`` loop whose body reads only ``r`` is replaced, in a copy of the
      template, by its text, made row by row and kept from round to round (see
      :class:`_HistoryLoop` and :class:`PromptState`): a round no longer renders the whole history.
    * Any failure renders again through ``Template.render`` of the template as written, so errors
      and their tracebacks are exactly Jinja's own.
    """

    def __init__(self, env: SandboxedEnvironment, template: Template, source: str | None) -> None:
        self.template = template
        self.name = template.name
        self._env = env
        self._globals = dict(template.globals)
        self._texts: dict[str, str] = {}
        self._names: list[str] | None = None  # the variables it reads, if its text is kept (see _static_variables)
        self.may_call = True  # whether it may call a method, and so change the context it is given
        self._without_loops: Template | None = None
        self.loops: list[_HistoryLoop] = []
        try:
            ast = env.parse(source) if source is not None else None
            used = meta.find_undeclared_variables(ast) if ast is not None else None
        except Exception:
            ast = used = None  # nothing is known about it: rendered plainly, every time
        if ast is not None and used is not None:
            self._names = _static_variables(ast, used)
            self.may_call = next(ast.find_all(nodes.Call), None) is not None
            if any(isinstance(f.iter, nodes.Name) and f.iter.name == "history" for f in ast.find_all(nodes.For)):
                split = _split_history_loops(env, env.parse(source), used)  # on a copy of its own: it rewrites it
                if split is not None:
                    self._without_loops, self.loops = split

    def render(self, context: dict[str, object]) -> str:
        names = self._names
        if names is not None:
            key = repr([context.get(name, _ABSENT) for name in names])
            text = self._texts.get(key)
            if text is None:
                text = self._render(context)
                if len(self._texts) >= 256:
                    self._texts.clear()
                self._texts[key] = text
            return text
        return self._render(context)

    def _render(self, context: dict[str, object]) -> str:
        template = self.template
        try:
            return _run(self._env, template, self._globals, context)
        except Exception:
            return template.render(context)  # raises the same error, the way Jinja reports it

    def render_loops(self, context: dict[str, object], loop_texts: list[str]) -> str:
        """Render with each history loop's text given (``loop_texts[i]`` for ``self.loops[i]``)."""
        assert self._without_loops is not None
        try:
            parent = {**context}
            for loop, text in zip(self.loops, loop_texts, strict=True):
                parent[loop.var] = text
            return _run(self._env, self._without_loops, self._globals, parent)
        except Exception:
            return self.template.render(context)  # the template as written: its own error, or its text


def _run(env: SandboxedEnvironment, template: Template, globals_: dict[str, object], context: dict[str, object]) -> str:
    """``template.render(context)`` without its overheads; errors are raised without Jinja's rewriting."""
    ctx = env.context_class(env, {**globals_, **context}, template.name, template.blocks, globals=globals_)
    return env.concat(template.root_render_func(ctx))  # type: ignore[attr-defined,no-any-return]


class _HistoryLoop:
    """A ``{% for r in history %}`` loop of a template whose body reads nothing but ``r``.

    Its output is the concatenation of its body's text for each row, and that text depends on the
    row alone: so it is made once per distinct row (rows recur across games: round number, moves
    and payoffs) and, for one player's game, once per round (see :class:`PromptState`), instead of
    rendering the whole history again every round. The template is rendered with the loop
    replaced by the joined texts (variable ``var``).
    """

    def __init__(self, env: SandboxedEnvironment, var: str, target: str, body: Template) -> None:
        self.var = var
        self._env = env
        self._target = target
        self._body = body
        self._globals = dict(body.globals)
        self._texts: dict[tuple[object, ...], str] = {}

    def text(self, row: dict[str, object]) -> str:
        key = tuple(row.values())  # rows are built by _history_rows: always the same keys, in order
        text = self._texts.get(key)
        if text is None:
            text = _run(self._env, self._body, self._globals, {self._target: row})
            if len(self._texts) >= 65536:
                self._texts.clear()
            self._texts[key] = text
        return text


# What a history loop's body may contain for its text to depend on its row alone: output, tests,
# comparisons, arithmetic, filters (but ``random``) and nested ifs and loops. Not: calls, macros,
# blocks, includes, ``loop``, autoescape blocks, or any variable other than the row.
_PURE_NODES = (
    nodes.Output, nodes.TemplateData, nodes.If, nodes.For, nodes.Assign, nodes.Name, nodes.Const, nodes.Getattr,
    nodes.Getitem, nodes.Slice, nodes.Filter, nodes.Test, nodes.Compare, nodes.Operand, nodes.CondExpr, nodes.And,
    nodes.Or, nodes.Not, nodes.Neg, nodes.Pos, nodes.Concat, nodes.Add, nodes.Sub, nodes.Mul, nodes.Div,
    nodes.FloorDiv, nodes.Mod, nodes.Pow, nodes.Tuple, nodes.List, nodes.Dict, nodes.Pair, nodes.Keyword,
)  # fmt: skip


def _split_history_loops(
    env: SandboxedEnvironment, ast: nodes.Template, used: set[str]
) -> tuple[Template, list[_HistoryLoop]] | None:
    """The template with each eligible history loop replaced by a variable holding its text, and
    those loops; None if it has none. Only loops at the top level or inside ``if`` blocks qualify
    (not inside macros, blocks, other loops or autoescape blocks), and only if the template never
    binds ``history`` itself and extends no other template. ``ast`` is rewritten; ``used``: the
    variables the template reads."""
    if next(ast.find_all(nodes.Extends), None) is not None:
        return None
    if any(n.name == "history" and n.ctx != "load" for n in ast.find_all(nodes.Name)):
        return None
    loops: list[_HistoryLoop] = []

    def eligible(node: nodes.For) -> bool:
        if not (isinstance(node.target, nodes.Name) and isinstance(node.iter, nodes.Name)):
            return False
        if node.iter.name != "history" or node.else_ or node.test is not None or node.recursive:
            return False
        for child in node.body:
            for n in (child, *child.find_all(nodes.Node)):
                if not isinstance(n, _PURE_NODES) or (isinstance(n, nodes.Filter) and n.name == "random"):
                    return False
        body = nodes.Template(node.body, lineno=1)
        body.set_environment(env)
        return meta.find_undeclared_variables(body) <= {node.target.name}

    def visit(body: list[nodes.Node]) -> None:
        for i, node in enumerate(body):
            if isinstance(node, nodes.For) and eligible(node):
                var = f"_pdbench_history_loop_{len(loops)}"
                if var in used:
                    continue
                assert isinstance(node.target, nodes.Name)
                template = env.from_string(nodes.Template(node.body, lineno=1))
                loops.append(_HistoryLoop(env, var, node.target.name, template))
                body[i] = nodes.Output([nodes.Name(var, "load", lineno=node.lineno)], lineno=node.lineno)
            elif isinstance(node, nodes.If):
                visit(node.body)
                for branch in node.elif_:
                    visit(branch.body)
                visit(node.else_)

    try:
        visit(ast.body)
        if not loops:
            return None
        ast.set_environment(env)
        return env.from_string(ast), loops
    except Exception:
        return None


def _static_variables(ast: nodes.Template, names: set[str]) -> list[str] | None:
    """The context variables a template reads (``names``), sorted, if its text depends on nothing else
    and on no per-round variable; otherwise None."""
    if names & _PER_ROUND or any(n.name == "lipsum" for n in ast.find_all(nodes.Name)):
        return None  # (globals such as lipsum are not among the names a template reads from its context)
    if next(ast.find_all((nodes.Extends, nodes.Include, nodes.Import, nodes.FromImport)), None) is not None:
        return None  # another template may read any variable
    if any(f.name == "random" for f in ast.find_all(nodes.Filter)):
        return None
    return sorted(names)


class PromptState:
    """What one player's prompts in one game carry from round to round (see :meth:`PromptBuilder.render`).

    Give each player of each game its own. A state handed a history that does not continue the one
    it holds (another game, a replay) simply starts afresh.
    """

    __slots__ = ("builder", "moves", "rows", "texts")

    def __init__(self) -> None:
        self.builder: PromptBuilder | None = None
        self.moves: tuple[tuple[object, ...], ...] = ((), (), (), ())  # the view's moves and payoffs so far
        self.rows: list[dict[str, object]] = []  # one history row per played round
        self.texts: list[list[str]] = []  # per history loop of the round template: each row's text


class PromptBuilder:
    """Loads the templates and persona once, then renders the chat messages for each round."""

    def __init__(self, settings: PromptSettings | None = None) -> None:
        self.settings = settings or PromptSettings()
        self._template_dirs = _template_dirs(self.settings)
        self._persona_dirs = [d / "personas" for d in self._template_dirs if (d / "personas").is_dir()]
        if PERSONAS_DIR.is_dir():
            self._persona_dirs.append(PERSONAS_DIR)
        self._env = _DictFirstSandbox(
            loader=ChoiceLoader(
                [
                    PrefixLoader({"personas": FileSystemLoader(self._persona_dirs)}),
                    FileSystemLoader(self._template_dirs),
                ]
            ),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,
        )
        self._system = self._load(self.settings.system_template)
        self._round = self._load(self.settings.round_template)
        self._persona = self._load_persona(self.settings.persona)
        # Rendering one round's messages cannot change the history rows unless a template calls a
        # method (``history.pop()``): then each render gets its own copies, else they are reused.
        self._share_rows = not any(t is not None and t.may_call for t in (self._system, self._round, self._persona))

    def render(self, view: RoundView, state: PromptState | None = None) -> list[dict[str, str]]:
        """The system and user messages for ``view``; identical views give identical messages.

        ``state`` (optional, one per player and game) carries the history rows, and their text in
        the round template's history loops, from one round to the next, so that a round costs the
        same whatever the length of the history. The messages are the same with or without it.
        """
        played = len(view.own_moves)
        start = _first_shown(played, self.settings)
        rows, texts = self._history(view, state if state is not None else PromptState())
        shown = rows[start:] if self._share_rows else [dict(row) for row in rows[start:]]
        context = _context(view, self.settings, shown, start)
        context["persona"] = self._render(self._persona, context) if self._persona else None
        loop_texts = ["".join(t[start:]) for t in texts] if self._round.loops and texts is not None else None
        user = self._render(self._round, context, loop_texts)
        return [
            {"role": "system", "content": self._render(self._system, context)},
            {"role": "user", "content": user},
        ]

    def _history(self, view: RoundView, state: PromptState) -> tuple[list[dict[str, object]], list[list[str]] | None]:
        """Every played round's history row, and its text in each history loop of the round template
        (None after a template error): kept in ``state`` as far as ``view`` continues the history
        ``state`` holds, made for the rest."""
        own, opp, own_p, opp_p = view.own_moves, view.opponent_moves, view.own_payoffs, view.opponent_payoffs
        played = len(own)
        done = len(state.rows)
        kept = state.moves
        if (
            state.builder is not self
            or played < done
            or tuple(own[:done]) != kept[0]
            or tuple(opp[:done]) != kept[1]
            or tuple(own_p[:done]) != kept[2]
            or tuple(opp_p[:done]) != kept[3]
        ):
            state.builder, state.moves, state.rows = self, ((), (), (), ()), []
            state.texts = [[] for _ in self._round.loops]
            done = 0
        if played > done:
            rows = _history_rows(view, self.settings.labels, done, played)
            try:
                texts = [[loop.text(row) for row in rows] for loop in self._round.loops]
            except Exception:  # a template error: the template is rendered (and reported) as written
                state.builder = None
                return [*state.rows, *rows], None
            state.rows.extend(rows)
            for texts_so_far, new in zip(state.texts, texts, strict=True):
                texts_so_far.extend(new)
            state.moves = (tuple(own), tuple(opp), tuple(own_p), tuple(opp_p))
        return state.rows, state.texts

    def check(self) -> None:
        """Render every template against synthetic rounds; raise ConfigError on the first problem."""
        labels = self.settings.labels
        prompts = [self.render(view)[-1]["content"] for view in synthetic_views(self.settings.history_window)]
        for prompt in prompts:
            missing = [label for label in (labels.cooperate, labels.defect) if not _mentions(prompt, label)]
            if missing:
                raise ConfigError(
                    f"prompt template {self.settings.round_template!r} never shows the label(s) "
                    f"{', '.join(missing)}, so the model cannot know how to answer: "
                    "use {{ labels.cooperate }} and {{ labels.defect }} in it"
                )

    def _load(self, name: str) -> _Renderer:
        try:
            template = self._env.get_template(name)
        except TemplateNotFound as exc:
            folders = ", ".join(str(d) for d in self._template_dirs)
            raise ConfigError(
                f"prompt template {exc.name!r} not found in {folders}: check the name or template_dir"
            ) from exc
        except TemplateSyntaxError as exc:
            raise ConfigError(
                f"prompt template {exc.name or name!r} has a syntax error at line {exc.lineno}: {exc.message}"
            ) from exc
        try:
            source: str | None = self._env.loader.get_source(self._env, name)[0]  # type: ignore[union-attr]
        except Exception:
            source = None  # the template renders all the same, only without keeping its text
        return _Renderer(self._env, template, source)

    def _load_persona(self, persona: str | None) -> _Renderer | None:
        """A persona is a name from personas/ ("cooperative") or a path to a markdown file."""
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
        if not path.is_file():
            raise ConfigError(f"persona file {str(path)!r} does not exist: give a persona name or a path to a .md file")
        source = path.read_text(encoding="utf-8")
        try:
            return _Renderer(self._env, self._env.from_string(source), source)
        except TemplateSyntaxError as exc:
            where = f"persona file {str(path)!r}"
            raise ConfigError(f"{where} has a syntax error at line {exc.lineno}: {exc.message}") from exc

    def _render(self, template: _Renderer, context: dict[str, object], loop_texts: list[str] | None = None) -> str:
        """Render, turning any template failure into a ConfigError that names template and cause."""
        try:
            if loop_texts is not None:
                return template.render_loops(context, loop_texts).strip()
            return template.render(context).strip()
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
        if not user.is_dir():
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
