"""How large a value a template operation would build, worked out before the operation runs.

A prompt template may ask for ``{{ "x" * 2000000000 }}``, ``"%2000000000s" % x`` or ``range(1000)|join(sep)``
with a long ``sep``: each builds its result in one step of C code that no later check can stop. So the
operations that can multiply a size (repetition, powers, format widths, padding, joining, replacing,
indenting, wrapping, batching) are sized here from their operands and refused when the result would pass
:data:`MAX_RENDER_CHARS`; :mod:`harness.players.model.prompts.sandbox` calls these checks from the sandbox's hooks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from jinja2.utils import Namespace

MAX_RENDER_CHARS = 1_000_000  # about 250,000 tokens: more than a model's context holds
MAX_INT_BITS = 100_000  # about 30,000 decimal digits
MAX_FORMAT_WIDTH = 10_000  # widths and precisions in format strings
MAX_JSON_INDENT = 100
_SEQUENCES = (list, tuple, set, frozenset)


class RenderLimitError(Exception):
    """A template passed a size or time limit; the message says which and what to do."""


def too_large(what: str) -> RenderLimitError:
    return RenderLimitError(
        f"{what} more than {MAX_RENDER_CHARS:,} characters, the most a prompt may have (about 250,000 "
        "tokens, beyond any model's context): in a long game, show only recent rounds with history_window"
    )


def weight(value: Any, budget: int = MAX_RENDER_CHARS) -> int:
    """The size of ``value`` as text, roughly: characters of strings, one per element and key of
    containers plus what they hold, digits of integers. Counting stops once it passes ``budget``, so
    the cost is bounded whatever the value (a list of a million references to one long string)."""
    if isinstance(value, str):  # by far the most common: everything a template writes
        return len(value)
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if isinstance(item, (str, bytes)):
            total += len(item)
        elif kind in _SEQUENCES:
            total += len(item) + 1
            stack.extend(item)
        elif kind is dict:
            total += len(item) + 1
            stack.extend(item.keys())
            stack.extend(item.values())
        elif kind is int:
            total += item.bit_length() // 3 + 1
        elif kind is Namespace:
            stack.append(object.__getattribute__(item, "_Namespace__attrs"))
        else:
            total += 1
        if total > budget:
            return total
    return total


def check(value: Any, what: str = "holds a value of") -> Any:
    if weight(value) > MAX_RENDER_CHARS:
        raise too_large(what)
    return value


def check_size(n: int, what: str = "would build a value of") -> None:
    if n > MAX_RENDER_CHARS:
        raise too_large(what)


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# -- format strings ---------------------------------------------------------------------------------
_PRINTF = re.compile(r"%[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_FORMAT_SPEC = re.compile(r"\{[^{}]*?:([^{}]*)(\{?)")


def check_printf(fmt: str) -> None:
    for match in _PRINTF.finditer(fmt):
        for number in match.groups():
            if number == "*":
                raise RenderLimitError("uses a '*' width in a % format; write the width in the format itself")
            if number is not None and int(number) > MAX_FORMAT_WIDTH:
                raise RenderLimitError(f"asks for a format width of {int(number):,} (at most {MAX_FORMAT_WIDTH:,})")


def check_format(fmt: str) -> None:
    for match in _FORMAT_SPEC.finditer(fmt):
        spec, nested = match.groups()
        if nested:
            raise RenderLimitError("takes a format width from a variable; write the width in the format itself")
        for number in re.findall(r"\d+", spec):
            if int(number) > MAX_FORMAT_WIDTH:
                raise RenderLimitError(f"asks for a format width of {int(number):,} (at most {MAX_FORMAT_WIDTH:,})")


# -- filters and string methods that can multiply a size, each with its bound ------------------------
def materialize(value: Iterable[Any]) -> list[Any]:
    out = []
    for item in value:
        out.append(item)
        if len(out) > MAX_RENDER_CHARS:
            raise too_large("iterates over")
    return out


def _join_size(items: list[Any], sep: Any) -> int:
    return weight(items) + max(len(items) - 1, 0) * weight(sep)


def _replace_size(text: str, old: Any, new: Any, count: Any = -1) -> int:
    old, new = str(old), str(new)
    n = text.count(old) if old else len(text) + 1
    limit = as_int(count)
    if limit is not None and limit >= 0:
        n = min(n, limit)
    return len(text) + n * len(new)


# Filters that never turn a whole value into text and give back at most what they are given (a count, an
# element, the same elements reordered or regrouped): their input and result need no check, and
# `history | length` need not walk the history. batch and slice are bounded by their estimate below.
SAME_SIZE = frozenset(
    {
        "abs",
        "attr",
        "batch",
        "count",
        "default",
        "d",
        "dictsort",
        "first",
        "groupby",
        "items",
        "last",
        "length",
        "map",
        "max",
        "min",
        "random",
        "reject",
        "rejectattr",
        "reverse",
        "select",
        "selectattr",
        "slice",
        "sort",
        "sum",
        "unique",
    }
)


def _arg(rest: list[Any], kwargs: dict[str, Any], index: int, name: str, default: Any) -> Any:
    if name in kwargs:
        return kwargs[name]
    return rest[index] if index < len(rest) else default


def check_filter(name: str, value: Any, rest: list[Any], kwargs: dict[str, Any]) -> None:
    if name in ("center", "batch", "slice", "truncate", "wordwrap"):
        for a in list(rest) + list(kwargs.values()):
            n = as_int(a)
            if n is not None and abs(n) > MAX_RENDER_CHARS:
                check_size(abs(n))
    if name == "join":
        check_size(_join_size(list(value) if value is not None else [], _arg(rest, kwargs, 0, "d", "")))
    elif name == "replace":
        check_size(
            _replace_size(
                str(value),
                _arg(rest, kwargs, 0, "old", ""),
                _arg(rest, kwargs, 1, "new", ""),
                _arg(rest, kwargs, 2, "count", None),
            )
        )
    elif name == "indent":
        width = _arg(rest, kwargs, 0, "width", 4)
        pad = abs(width) if as_int(width) is not None else len(str(width))
        text = str(value)
        check_size(len(text) + (text.count("\n") + 1) * pad)
    elif name == "format":
        check_printf(str(value))
    elif name == "wordwrap":
        wrap = _arg(rest, kwargs, 2, "wrapstring", None)
        width = as_int(_arg(rest, kwargs, 0, "width", 79)) or 1
        text = str(value)
        check_size(len(text) + (len(text) // max(width, 1) + 1) * len(str(wrap or "\n")))
    elif name == "tojson":
        indent = as_int(_arg(rest, kwargs, 0, "indent", None))
        if indent is not None and indent > MAX_JSON_INDENT:
            raise RenderLimitError(f"asks tojson for an indent of {indent:,} (at most {MAX_JSON_INDENT})")
    elif name == "sum":
        start = _arg(rest, kwargs, 1, "start", 0)
        if not isinstance(start, (int, float)):
            raise RenderLimitError("uses sum with a start that is not a number; sum adds numbers only")


def check_str_method(text: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    rest = list(args)
    if method in ("center", "ljust", "rjust", "zfill"):
        width = as_int(_arg(rest, kwargs, 0, "width", 0))
        if width is not None:
            check_size(width)
    elif method == "expandtabs":
        size = as_int(_arg(rest, kwargs, 0, "tabsize", 8)) or 0
        check_size(len(text) + text.count("\t") * max(size, 0))
    elif method == "replace":
        check_size(
            _replace_size(
                text,
                _arg(rest, kwargs, 0, "old", ""),
                _arg(rest, kwargs, 1, "new", ""),
                _arg(rest, kwargs, 2, "count", -1),
            )
        )
    elif method == "join":
        items = args[0] if args else []
        check_size(_join_size(items if isinstance(items, list) else materialize(items), text))


def check_binop(operator: str, left: Any, right: Any) -> None:
    """``*`` (repetition, or integers multiplied), ``**`` (an integer power) and ``%`` (a format)."""
    if operator == "*":
        for seq, times in ((left, right), (right, left)):
            n = as_int(times)
            if n is not None and isinstance(seq, (str, list, tuple)):
                check_size(weight(seq) * max(n, 0))
        a, b = as_int(left), as_int(right)
        if a is not None and b is not None and a.bit_length() + b.bit_length() > MAX_INT_BITS:
            raise RenderLimitError(f"multiplies integers into one of more than {MAX_INT_BITS:,} bits")
    elif operator == "**":
        a, b = as_int(left), as_int(right)
        if a is not None and b is not None and abs(a) > 1 and b * a.bit_length() > MAX_INT_BITS:
            raise RenderLimitError(f"raises an integer to a power of more than {MAX_INT_BITS:,} bits")
    elif operator == "%" and isinstance(left, str):
        check_printf(left)
