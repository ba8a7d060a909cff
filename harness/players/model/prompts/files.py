"""Where the prompt templates and personas come from, and which files may be read as one.

The user's ``template_dir`` comes first (its templates override the shipped ones in ``prompts/``),
and each template folder may hold a ``personas/`` folder searched before the shipped ``personas/``.
Only files meant to be prompts are read, as a prompt is sent to the model and stored with the run: a
config from elsewhere once named ``template_dir: /proc/self, system_template: environ`` and sent every
key of the environment. So (:func:`prompt_path_problem`) templates are ``.j2`` files and personas ``.md``
files, regular files of at most 1 MB (:func:`harness.util.userfiles.read_user_file`), whose real path (links
followed) has no component starting with a dot (``.env``, ``~/.aws/``, ``~/.ssh/``) and is not under
``/proc``, ``/sys`` or ``/dev``; the same holds for the user's template folder itself. The shipped
``prompts/`` and ``personas/`` are PDBench's own and trusted wherever it is installed.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, FileSystemLoader, PrefixLoader, StrictUndefined, TemplateNotFound
from jinja2.loaders import split_template_path

from harness.errors import ConfigError
from harness.players.model.prompts.sandbox import BoundedEnvironment
from harness.util.userfiles import read_user_file

_ROOT = Path(__file__).resolve().parents[4]  # the checkout: harness/players/model/prompts/files.py
PROMPTS_DIR = _ROOT / "prompts"
PERSONAS_DIR = _ROOT / "personas"
CLASSIC_DIR = PROMPTS_DIR / "classic"
TEMPLATE_SUFFIX = ".j2"
PERSONA_SUFFIX = ".md"
SYSTEM_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))
"""Folders of the kernel's and devices' files: never a prompt (``/proc/self/environ`` holds every key)."""
MAX_PERSONA_NAME = 100
_PERSONA_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_-]{{0,{MAX_PERSONA_NAME - 1}}}")


def template_dirs(template_dir: str | None, classic: bool = False) -> list[Path]:
    """The user's folder first (its templates override the shipped ones), then, for the ``classic`` layout,
    ``prompts/classic/`` (its templates override the default layout's), then the repo's prompts/."""
    dirs: list[Path] = []
    if template_dir is not None:
        user = Path(template_dir).expanduser()
        try:
            is_dir = user.is_dir()
        except OSError as exc:  # a name too long, a loop of links
            raise ConfigError(f"prompt template_dir {str(user)[:200]!r} cannot be used: {os_reason(exc)}") from None
        if not is_dir:
            raise ConfigError(f"prompt template_dir {str(user)!r} is not a folder: create it or fix the path")
        if (problem := prompt_path_problem(user)) is not None:
            raise ConfigError(
                f"prompt template_dir {str(user)[:200]!r} {problem}; templates are sent to the model and stored "
                f"with the run, so only a folder of your own templates (*{TEMPLATE_SUFFIX}) may be template_dir"
            )
        dirs.append(user)
    if PROMPTS_DIR.is_dir():
        if classic:
            dirs.append(CLASSIC_DIR)
        dirs.append(PROMPTS_DIR)
    elif not dirs:
        raise ConfigError(
            f"the prompt templates folder was not found: looked for {PROMPTS_DIR}. "
            "Reinstall PDBench from its repository (pip install -e .) or set template_dir"
        )
    return dirs


def persona_dirs(template_folders: list[Path]) -> list[Path]:
    """The ``personas/`` folders of the template folders, then the repo's personas/."""
    dirs = [d / "personas" for d in template_folders if d != CLASSIC_DIR and (d / "personas").is_dir()]
    if PERSONAS_DIR.is_dir():
        dirs.append(PERSONAS_DIR)
    return dirs


def prompt_environment(template_folders: list[Path], persona_folders: list[Path]) -> BoundedEnvironment:
    """The bounded sandbox the templates render in, loading ``personas/<name>.md`` from the persona
    folders and every other name from the template folders.

    One environment per set of folders, shared by every builder in the process, so that each
    template is compiled once rather than once per condition and seat; Jinja's template cache
    checks each file's modification time on use, so an edited template is compiled again.
    """
    return _environment(tuple(template_folders), tuple(persona_folders))


@lru_cache(maxsize=32)
def _environment(template_folders: tuple[Path, ...], persona_folders: tuple[Path, ...]) -> BoundedEnvironment:
    return BoundedEnvironment(
        loader=ChoiceLoader(
            [
                PrefixLoader({"personas": PromptFileLoader(list(persona_folders), PERSONA_SUFFIX)}),
                PromptFileLoader(list(template_folders)),
            ]
        ),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def find_persona(persona: str, folders: list[Path]) -> str | Path:
    """A persona's template name (``personas/<name>.md``) when ``persona`` is a name from the persona
    folders ("cooperative"), or its path when it is the path of a markdown (``.md``) file that is not a
    dotfile: a persona is sent to the model, so nothing else (``/etc/passwd``, ``.env``) may be."""
    if _PERSONA_NAME.fullmatch(persona):
        if any((d / f"{persona}.md").is_file() for d in folders):
            return f"personas/{persona}.md"
        available = ", ".join(available_personas(folders)) or "none"
        looked = ", ".join(str(d) for d in folders) or str(PERSONAS_DIR)
        raise ConfigError(
            f"unknown persona {persona!r}; available personas: {available} (looked in {looked}). "
            "Use one of these names or a path to a .md file."
        )
    path = Path(persona).expanduser()
    if path.suffix.lower() != PERSONA_SUFFIX or path.name.startswith("."):
        shown = persona if len(persona) <= 80 else persona[:77] + "..."
        raise ConfigError(
            f"persona {shown!r} is neither a persona name (letters, digits, '_' and '-', at most "
            f"{MAX_PERSONA_NAME} characters, e.g. cooperative) nor the path of a markdown file (ending in .md, "
            "not a dotfile): the persona's text is sent to the model, so only persona files are read"
        )
    if (problem := prompt_path_problem(path, PERSONA_SUFFIX)) is not None:
        raise ConfigError(
            f"persona file {str(path)[:200]!r} {problem}; the persona's text is sent to the model and stored with "
            "the run, so only persona files are read: move it to a folder of your own or use a persona name"
        )
    return path


def read_persona_file(path: Path) -> str:
    """The text of a persona file named by its path (see :func:`find_persona`)."""
    where = f"persona file {str(path)!r}"
    try:
        return read_user_file(path, "persona file")
    except FileNotFoundError:
        raise ConfigError(f"{where} does not exist: give a persona name or a path to a .md file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {where}: {os_reason(exc)}; give a readable .md file") from None


def available_personas(dirs: list[Path] | None = None) -> list[str]:
    """Persona names (file stems) in the given folders, or in the repo's personas/."""
    folders = [PERSONAS_DIR] if dirs is None else dirs
    return sorted({p.stem for d in folders if d.is_dir() for p in d.glob("*.md")})


def prompt_path_problem(path: Path, suffix: str | None = None) -> str | None:
    """Why ``path`` may not be read as a prompt file (a template folder when ``suffix`` is None), or None.

    Judged on the real path, links followed, so that a link named ``system.j2`` cannot point at
    ``/proc/self/environ`` or ``~/.aws/credentials``: no component may start with a dot, nothing under
    :data:`SYSTEM_ROOTS`, and a file must end in ``suffix`` (as named and as linked to). Anything inside the
    shipped ``prompts/`` and ``personas/`` is PDBench's own and accepted."""
    try:
        real = Path(os.path.realpath(path))
    except (OSError, ValueError) as exc:
        return f"cannot be used: {os_reason(exc)}"
    for shipped in (PROMPTS_DIR, PERSONAS_DIR):
        if real.is_relative_to(shipped.resolve()):
            return None
    for root in SYSTEM_ROOTS:
        if real.is_relative_to(root):
            return f"is under {root}, where the system's and the process's own files are (its environment holds keys)"
    hidden = [part for part in real.parts if part.startswith(".")]
    if hidden:
        return (
            f"has {hidden[0]!r} in its real path: dotfiles and dot-folders hold settings and keys "
            "(.env, ~/.aws, ~/.ssh)"
        )
    if suffix is not None:
        for name in dict.fromkeys((Path(path).name, real.name)):
            if not name.lower().endswith(suffix):
                return f"is not a {suffix} file ({name!r})"
    return None


def os_reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


class PromptFileLoader(FileSystemLoader):
    """Jinja's file loader, reading only what may be a prompt (see :func:`prompt_path_problem`): files
    ending in ``suffix`` (``.j2`` templates, ``.md`` personas), no dotfile or dot-folder (``.env`` holds
    keys), nothing under ``/proc``, ``/sys`` or ``/dev``, no device or pipe, nothing over 1 MB (see
    :func:`harness.util.userfiles.read_user_file`)."""

    def __init__(self, searchpath: list[Path], suffix: str = TEMPLATE_SUFFIX) -> None:
        super().__init__(searchpath)
        self.suffix = suffix

    def get_source(self, environment: Any, template: str) -> tuple[str, str, Callable[[], bool]]:
        pieces = split_template_path(template)
        if any(piece.startswith(".") for piece in pieces):
            raise ConfigError(
                f"prompt template {template!r} is a dotfile; templates are sent to the model, and dotfiles "
                "(.env) hold settings and keys: name a template file that does not start with '.'"
            )
        if not template.lower().endswith(self.suffix):
            if self.suffix != TEMPLATE_SUFFIX:
                raise TemplateNotFound(template)  # personas/<name>.j2 is a template's name: the next loader's
            raise ConfigError(
                f"prompt template {template!r} does not end in {self.suffix}; templates are sent to the model and "
                f"stored with the run, so only template files (*{self.suffix}) are read: name one, or rename yours"
            )
        for folder in self.searchpath:
            filename = posixpath.join(folder, *pieces)
            if os.path.isfile(filename):
                break
        else:
            raise TemplateNotFound(template)
        if (problem := prompt_path_problem(Path(filename), self.suffix)) is not None:
            raise ConfigError(f"prompt template {filename!r} {problem}: only your own template files are read")
        try:
            text = read_user_file(Path(filename), "prompt template")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read prompt template {filename}: {os_reason(exc)}") from None
        mtime = os.path.getmtime(filename)
        return text, os.path.normpath(filename), lambda: _mtime(filename) == mtime


def _mtime(filename: str) -> float | None:
    try:
        return os.path.getmtime(filename)
    except OSError:
        return None
