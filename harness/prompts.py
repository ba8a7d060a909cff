"""The words a model sees: Jinja templates in ``prompts/`` and personas in ``personas/``.

Templates run in a sandbox with ``StrictUndefined``, so a misspelt variable is an error, and
:meth:`PromptBuilder.check` renders every template against synthetic rounds when a config is
validated: a typo fails before the first paid call, not in round 37 of game 200.

Only actions cross between players: the template context is built from a
:class:`~harness.agents.base.RoundView` (moves, payoffs, scores), never from another
model's text. The wording is driven by the configured labels, so neutral labels (J/F)
produce prompts that never say "cooperate" or "defect".
"""

from __future__ import annotations

import re
from pathlib import Path

from jinja2 import ChoiceLoader, FileSystemLoader, PrefixLoader, StrictUndefined, Template, TemplateNotFound
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
    labels = settings.labels
    played = len(view.own_moves)
    shown = played if settings.history_window is None else min(played, settings.history_window)
    history = [
        {
            "round": i + 1,
            "you": labels.label(view.own_moves[i]),
            "they": labels.label(view.opponent_moves[i]),
            "you_got": _num(view.own_payoffs[i]),
            "they_got": _num(view.opponent_payoffs[i]),
        }
        for i in range(played - shown, played)
    ]
    return {
        "round": view.round,
        "rounds_played": played,
        "labels": {"cooperate": labels.cooperate, "defect": labels.defect},
        "use_words": labels.uses_words,
        "horizon": _horizon(view.horizon),
        "payoffs": _payoff_rows(view.payoffs, view.seat, labels),
        "history": history,
        "rounds_hidden": played - shown,
        "your_score": _num(view.own_score),
        "their_score": _num(view.opponent_score),
    }


def _num(x: float) -> str:
    """3.0 -> "3", 2.5 -> "2.5": models read "3" more naturally than "3.0"."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _horizon(info: HorizonInfo) -> dict[str, object]:
    """What the player may know: the length of a fixed game, only the odds of a geometric one."""
    if info.kind == "fixed":
        return {"kind": "fixed", "n_rounds": info.n_rounds}
    prob = info.continuation_prob
    return {"kind": "geometric", "continuation_prob": None if prob is None else _num(prob)}


def _payoff_rows(payoffs: PayoffMatrix, seat: str, labels: ActionLabels) -> list[dict[str, str]]:
    """The four outcomes as (your move, their move, your points, their points) for this seat."""
    table = payoffs.table()
    rows = []
    moves: tuple[Action, Action] = ("C", "D")
    for mine in moves:
        for theirs in moves:
            if seat == "a":
                you_get, they_get = table[(mine, theirs)]
            else:
                they_get, you_get = table[(theirs, mine)]
            you, they = labels.label(mine), labels.label(theirs)
            rows.append({"you": you, "they": they, "you_get": _num(you_get), "they_get": _num(they_get)})
    return rows


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

    def render(self, view: RoundView) -> list[dict[str, str]]:
        """The system and user messages for ``view``; identical views give identical messages."""
        context = round_context(view, self.settings)
        context["persona"] = self._render(self._persona, context) if self._persona else None
        return [
            {"role": "system", "content": self._render(self._system, context)},
            {"role": "user", "content": self._render(self._round, context)},
        ]

    def check(self) -> None:
        """Render every template against synthetic rounds; raise ConfigError on the first problem."""
        labels = self.settings.labels
        prompts = [self.render(view)[-1]["content"] for view in synthetic_views()]
        for prompt in prompts:
            missing = [label for label in (labels.cooperate, labels.defect) if not _mentions(prompt, label)]
            if missing:
                raise ConfigError(
                    f"prompt template {self.settings.round_template!r} never shows the label(s) "
                    f"{', '.join(missing)}, so the model cannot know how to answer: "
                    "use {{ labels.cooperate }} and {{ labels.defect }} in it"
                )

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
        try:
            return self._env.from_string(path.read_text(encoding="utf-8"))
        except TemplateSyntaxError as exc:
            where = f"persona file {str(path)!r}"
            raise ConfigError(f"{where} has a syntax error at line {exc.lineno}: {exc.message}") from exc

    def _render(self, template: Template, context: dict[str, object]) -> str:
        """Render, turning any template failure into a ConfigError that names template and cause."""
        try:
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


def synthetic_views() -> list[RoundView]:
    """Round 1 and round 5 under both horizon kinds and both seats: every template branch runs."""
    fixed = HorizonInfo(kind="fixed", n_rounds=10, continuation_prob=None)
    geometric = HorizonInfo(kind="geometric", n_rounds=None, continuation_prob=0.95)
    own: tuple[Action, ...] = ("C", "C", "D", "C")
    opp: tuple[Action, ...] = ("C", "D", "D", "C")
    table = PayoffMatrix().table()
    own_p = tuple(table[(a, b)][0] for a, b in zip(own, opp, strict=True))
    opp_p = tuple(table[(a, b)][1] for a, b in zip(own, opp, strict=True))
    views = []
    for horizon in (fixed, geometric):
        views.append(RoundView("a", 1, horizon, PayoffMatrix(), (), (), (), (), 0.0, 0.0))
        views.append(RoundView("b", 5, horizon, PayoffMatrix(), opp, own, opp_p, own_p, sum(opp_p), sum(own_p)))
    return views
