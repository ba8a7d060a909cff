"""What a pydantic error means to the person who wrote the file: a misspelt key gets the key it was probably
meant to be (``max_round`` -> "did you mean max_rounds?", from the keys valid at that place), and a number
written in quotes (``noise: "0.02"``) is called a quoted string with its fix, rather than "Input should be a
valid number"."""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

from pydantic import BaseModel, Tag

UNKNOWN_KEY = "unknown key; check its spelling and section (see configs/experiment.yaml)"


def _models(annotation: Any) -> list[tuple[Any, type[BaseModel]]]:
    """The config classes an annotation may hold (through Optional, unions and lists), with each one's tag."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *meta = typing.get_args(annotation)
        tags = [m.tag for m in meta if isinstance(m, Tag)]
        return [(tags[0] if tags else tag, model) for tag, model in _models(inner)]
    if origin in (typing.Union, types.UnionType, list):
        return [found for arg in typing.get_args(annotation) for found in _models(arg)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(None, annotation)]
    return []


def keys_at(root: type[BaseModel], loc: tuple[Any, ...]) -> list[str] | None:
    """The keys a config may have at ``loc`` (a pydantic error's location, union tags included), or None
    where the place is not a config class."""
    model = root
    parts = [p for p in loc if not isinstance(p, int)]  # a list's item: the annotation names its class
    i = 0
    while i < len(parts):
        if parts[i] not in model.model_fields:
            return None
        found = _models(model.model_fields[parts[i]].annotation)
        if len(found) > 1:  # a tagged union: the location's next part is the member's tag
            i += 1
            found = [(tag, member) for tag, member in found if i < len(parts) and tag == parts[i]]
        if len(found) != 1:
            return None
        model = found[0][1]
        i += 1
    return [field.alias or name for name, field in model.model_fields.items()]


def unknown_key(root: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """The message for an unknown key at ``loc``: the valid key it is closest to, if one is close."""
    key = loc[-1]
    valid = keys_at(root, loc[:-1])
    if isinstance(key, str) and valid:
        close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
        if close:
            return f"unknown key {key!r}; did you mean {close[0]}?"
        return f"unknown key {key!r}; the keys here are {', '.join(valid)}"
    return UNKNOWN_KEY


def quoted_number(value: Any) -> str | None:
    """A fix for a number written as a quoted string (``"0.02"``), or None if ``value`` is not one."""
    if not isinstance(value, str):
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    if number != number or number in (float("inf"), float("-inf")):
        return None
    return f"{value!r} is a quoted string, not a number; write it without quotes ({value.strip()})"
