"""Reading an experiment config: YAML text to a validated :class:`ExperimentConfig`, agent refs resolved,
and every problem reported at once with its key path."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from harness.config.agents import unchecked_model_problem
from harness.config.cross_checks import partial_problems
from harness.config.experiment import ExperimentConfig
from harness.config.hints import quoted_number, unknown_key
from harness.errors import ConfigError
from harness.util.userfiles import load_yaml, read_user_file, yaml_message


def _loc(parts: tuple[Any, ...]) -> str:
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out or "(top level)"


def _merge_repeats(problems: list[str]) -> list[str]:
    """One line for a problem that recurs in many conditions (an eval's shared model settings)."""
    by_message: dict[str, list[str]] = {}
    order: list[str] = []
    for p in problems:
        where, sep, message = p.partition(": ")
        key = re.sub(r"conditions\[\d+\]", "conditions[*]", where) + sep + message if sep else p
        if key not in by_message:
            by_message[key] = []
            order.append(key)
        by_message[key].append(p)
    out = []
    for key in order:
        first = by_message[key][0]
        more = len(by_message[key]) - 1
        if more:
            where, _, message = first.partition(": ")
            first = f"{where} (and the same in {more} more condition{'s' if more > 1 else ''}): {message}"
        out.append(first)
    return out


def _without_union_tags(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drop the ``policy``/``model`` tag pydantic inserts after ``agent_a``/``agent_b``."""
    out: list[Any] = []
    for i, part in enumerate(loc):
        if part in ("policy", "model") and i > 0 and loc[i - 1] in ("agent_a", "agent_b"):
            continue
        out.append(part)
    return tuple(out)


def _message(err: ErrorDetails) -> str:
    """Pydantic's message in the user's terms: the key meant by a misspelt one, the fix for a quoted number."""
    if err["type"] == "extra_forbidden":
        return unknown_key(ExperimentConfig, tuple(err["loc"]))
    if err["type"] not in ("literal_error", "enum", "string_type") and (fix := quoted_number(err["input"])):
        return fix
    return re.sub(r"^(Value|Assertion) error, ", "", err["msg"])


def _resolve_refs(data: dict[str, Any], base_dir: Path, problems: list[str]) -> set[tuple[Any, ...]]:
    """Replace each ``{ref: FILE, overrides: {...}}`` agent by the file's mapping merged with overrides.

    Returns the key paths of agents whose ref could not be read, so that the follow-on
    "field required" errors for them are not reported on top of the real problem.
    """
    broken: set[tuple[Any, ...]] = set()
    experiment = data.get("experiment")
    conditions = experiment.get("conditions") if isinstance(experiment, dict) else None
    if not isinstance(conditions, list):
        return broken
    for i, cond in enumerate(conditions):
        if not isinstance(cond, dict):
            continue
        for seat in ("agent_a", "agent_b"):
            agent = cond.get(seat)
            if not isinstance(agent, dict) or "ref" not in agent:
                continue
            where = f"experiment.conditions[{i}].{seat}"
            unknown = set(agent) - {"ref", "overrides"}
            if unknown:
                problems.append(f"{where}: with ref, only 'overrides' may be given, not {', '.join(sorted(unknown))}")
            if not isinstance(agent["ref"], str) or not agent["ref"]:
                problems.append(f"{where}.ref: must be the path of a YAML file, got {agent['ref']!r}")
                broken.add(("experiment", "conditions", i, seat))
                continue
            ref_path = base_dir / agent["ref"]
            try:
                base = load_yaml(read_user_file(ref_path, "agent file"))
            except FileNotFoundError:
                problems.append(f"{where}.ref: file not found: {ref_path.resolve()}")
                broken.add(("experiment", "conditions", i, seat))
                continue
            except ConfigError as exc:
                problems.append(f"{where}.ref: {exc}")
                broken.add(("experiment", "conditions", i, seat))
                continue
            except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
                problems.append(f"{where}.ref: cannot read {ref_path}: {_yaml_msg(exc)}")
                broken.add(("experiment", "conditions", i, seat))
                continue
            if not isinstance(base, dict):
                problems.append(f"{where}.ref: {ref_path} must hold a mapping of agent settings")
                broken.add(("experiment", "conditions", i, seat))
                continue
            overrides = agent.get("overrides") or {}
            if not isinstance(overrides, dict):
                problems.append(f"{where}.overrides: must be a mapping, got {overrides!r}")
                overrides = {}
            cond[seat] = {**base, **overrides}
    return broken


def _yaml_msg(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return yaml_message(exc)


def _unchecked_agents(data: dict[str, Any], locs: list[tuple[Any, ...]]) -> list[tuple[tuple[Any, ...], str]]:
    """The problems of model players whose own checks (persona, templates) never ran because another of their
    settings is wrong (see :func:`~harness.config.agents.unchecked_model_problem`), so that every problem is
    reported in one pass."""
    agents = sorted(
        {
            loc[:4]
            for loc in locs
            if len(loc) > 4
            and loc[:2] == ("experiment", "conditions")
            and isinstance(loc[2], int)
            and loc[3] in ("agent_a", "agent_b")
        }
        - set(locs)  # an error at the agent itself: its checks ran
    )
    out = []
    for loc in agents:
        agent = data["experiment"]["conditions"][loc[2]][loc[3]]
        if isinstance(agent, dict) and "model" in agent:
            problem = unchecked_model_problem(agent)
            if problem is not None:
                out.append((loc, f"{_loc(loc)}: {problem}"))
    return out


def as_played(stored: Any) -> Any:
    """A run's stored config (``runs.config_json``) as it was played. A model player stored before prompt
    layouts existed (its ``prompts`` have no ``layout``) was played with the templates that are now the
    classic layout; read without this, it would resume in today's default layout and its games would
    change prompts halfway."""
    if not isinstance(stored, dict):
        return stored
    conditions = (
        (stored.get("experiment") or {}).get("conditions") if isinstance(stored.get("experiment"), dict) else None
    )
    for condition in conditions if isinstance(conditions, list) else []:
        for seat in ("agent_a", "agent_b"):
            agent = condition.get(seat) if isinstance(condition, dict) else None
            prompts = agent.get("prompts") if isinstance(agent, dict) and "model" in agent else None
            if isinstance(prompts, dict) and "layout" not in prompts:
                prompts["layout"] = "classic"
    return stored


def parse_experiment(
    data: Any, source: str = "the config", base_dir: Path | None = None, fix_hint: str = "fix and try again"
) -> ExperimentConfig:
    """Validate an already-loaded config mapping. Raises ConfigError listing every problem."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source} must be a YAML mapping with the sections run, game, horizon, "
            f"noise, experiment and metrics; got {type(data).__name__}"
        )
    problems: list[str] = []
    broken = _resolve_refs(data, base_dir or Path.cwd(), problems)
    config: ExperimentConfig | None = None
    try:
        config = ExperimentConfig.model_validate(data)
    except ValidationError as exc:
        found: list[tuple[tuple[Any, ...], str]] = []
        for err in exc.errors():
            loc = _without_union_tags(tuple(err["loc"]))
            if any(loc[: len(b)] == b for b in broken):
                continue
            found.append((loc, f"{_loc(loc)}: {_message(err)}"))
        for agent, problem in _unchecked_agents(data, [loc for loc, _ in found]):
            last = max(i for i, (loc, _) in enumerate(found) if loc[: len(agent)] == agent)
            found.insert(last + 1, (agent, problem))  # beside the agent's other problems
        problems += [text for _, text in found]
        problems += partial_problems(data, [loc for loc, _ in found])
    if config is not None:
        problems += config.problems()
    problems = _merge_repeats(problems)
    if problems or config is None:
        n = len(problems)
        raise ConfigError(f"{source} has {n} problem{'s' if n != 1 else ''} ({fix_hint}):", problems)
    return config


def _read_yaml(path: Path, what: str, start_from: str) -> Any:
    """The data of a user's YAML file, or a one-paragraph :class:`ConfigError` saying why it cannot be had."""
    try:
        text = read_user_file(path, what)
    except FileNotFoundError:
        raise ConfigError(f"{what} not found: {path.resolve()}. Check the path, or {start_from}.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {what} {path}: {_yaml_msg(exc)}") from None
    try:
        return load_yaml(text)
    except (yaml.composer.ComposerError, yaml.constructor.ConstructorError) as exc:  # well-formed, but refused
        raise ConfigError(f"{path} cannot be read: {_yaml_msg(exc)}.") from None
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"{path} is not valid YAML: {_yaml_msg(exc)}. Fix the syntax (indentation, colons, quotes) and try again."
        ) from None


def load_experiment(path: str | Path) -> ExperimentConfig:
    """Read and validate an experiment YAML file."""
    path = Path(path)
    data = _read_yaml(path, "config file", "start from configs/experiment.yaml")
    return parse_experiment(
        data, source=str(path), base_dir=path.parent, fix_hint=f"fix them and check with `pdbench validate {path}`"
    )


MODEL_SETTINGS_EXAMPLE = "openai/gpt-4o-mini: {temperature: 0.7, max_tokens: 1000, parse: {max_retries: 0}}"


def load_model_settings(path: str | Path) -> dict[str, Any]:
    """Read the model players' settings of ``pdbench evolve --model-settings FILE``: a YAML mapping from each model
    player (as ``--players`` names it) to its settings, the keys of a model agent in an experiment file. Only
    the file's shape is checked here; the settings are validated with the evolution settings, as a whole."""
    path = Path(path)
    data = _read_yaml(path, "model settings file", f"write one such as {{{MODEL_SETTINGS_EXAMPLE}}}")
    if not isinstance(data, dict) or not data:
        raise ConfigError(
            f"{path} must map each model player to its settings, e.g. {MODEL_SETTINGS_EXAMPLE}; "
            f"it holds {type(data).__name__ if data is not None else 'nothing'}"
        )
    return data
