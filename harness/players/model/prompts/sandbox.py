"""The Jinja environment prompt templates run in: sandboxed, and bounded in size and time.

Jinja's sandbox stops a template from reaching Python's internals, but not from asking for
``{{ "x" * 2000000000 }}`` or looping for ever, and a prompt template is code a user writes. So every
render of a :class:`BoundedEnvironment` template is held to two limits, and stopped with a
:class:`RenderLimitError` when it passes one:

* **size**: no value a template builds, and not all it writes together, may exceed
  :data:`MAX_RENDER_CHARS` characters, and all the values it builds together not
  :data:`MAX_BUILT_CHARS`. Operations that can multiply a size (``*``, ``**``, ``%``,
  ``str.format``, ``~``, the filters and string methods that pad, repeat, join or replace) are sized
  *before* they run, from their operands (:mod:`harness.players.model.prompts.sizes`); the rest on their result;
* **time**: a render may take at most :data:`MAX_RENDER_SECONDS`. The clock is read at every loop
  iteration and call (a macro that calls itself): without a loop or a call, a template does a bounded
  amount of work, since every operation is bounded in size.

Values come from the context (sized by PDBench), from literals (bounded by the template's length) or
from operations, and every operation is checked, so attribute lookups need no check of their own: a
namespace that a loop doubles is stopped at the ``~``, ``+`` or call that doubles it.

Operations, calls and filters go through the sandbox's own hooks. Three things have none: a loop, a
piece of output and ``~``; so as a template is compiled, each is routed through a filter of this module
(:class:`_Bounds`), and nothing else of the template is changed. Templates are then rendered the
ordinary way (``template.render(context)``), or a block at a time (:meth:`BoundedTemplate.render_block`, each
render held to the limits afresh); the built-in ones take well under a millisecond, and the limits
only ever stop a template that would otherwise hang the run or exhaust memory.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from types import CodeType
from typing import Any, Literal, TypeVar, overload

from jinja2 import Template, nodes, pass_context
from jinja2.environment import Environment
from jinja2.nodes import EvalContext
from jinja2.runtime import Context, Macro
from jinja2.sandbox import SandboxedEnvironment
from jinja2.visitor import NodeTransformer

from harness.players.model.prompts.sizes import (
    MAX_RENDER_CHARS,
    SAME_SIZE,
    RenderLimitError,
    check,
    check_binop,
    check_filter,
    check_format,
    check_size,
    check_str_method,
    materialize,
    too_large,
    weight,
)

__all__ = ["MAX_RENDER_CHARS", "BoundedEnvironment", "BoundedTemplate", "RenderLimitError", "weight"]

MAX_RENDER_SECONDS = 2.0  # the built-in templates take well under a millisecond
MAX_BUILT_CHARS = 10 * MAX_RENDER_CHARS  # all values one render makes, together (see _built)


class _Budget(threading.local):
    """The limits of the render in progress on this thread (none outside a render)."""

    deadline: float | None = None
    written: int = 0
    built: int = 0


_budget = _Budget()
T = TypeVar("T")


def _tick() -> None:
    deadline = _budget.deadline
    if deadline is not None and time.monotonic() > deadline:
        raise RenderLimitError(
            f"took longer than {MAX_RENDER_SECONDS:g} s to render (the built-in templates take under a "
            "millisecond): look for loops inside loops in it"
        )


def _built(value: T) -> T:
    """A value an operation made: at most MAX_RENDER_CHARS itself, and with all the others made in this
    render at most MAX_BUILT_CHARS (a loop that keeps large values in a list or mapping would otherwise
    hold any amount of memory, each value small enough)."""
    size = weight(value)
    if size > MAX_RENDER_CHARS:
        raise too_large("would build a value of")
    budget = _budget
    budget.built += size
    if budget.built > MAX_BUILT_CHARS:
        raise RenderLimitError(
            f"builds more than {MAX_BUILT_CHARS:,} characters of values in all (a prompt is at most "
            f"{MAX_RENDER_CHARS:,}): look for a loop that keeps adding to a list or mapping"
        )
    return value


# -- what the compiled template calls (see _Bounds) --------------------------------------------------
@pass_context
def _paced(context: Context, iterable: Iterable[Any]) -> Iterator[Any]:
    """A loop's iterable, with the clock read at every iteration."""
    for item in iterable:
        _tick()
        yield item


@pass_context
def _emit(context: Context, value: Any) -> Any:
    """One piece of output (template text or ``{{ value }}``), counted against the render's size limit
    before Jinja turns it into text (a list's text can be far longer than the list)."""
    budget = _budget
    budget.written += len(value) if type(value) is str else weight(value)
    if budget.written > MAX_RENDER_CHARS:
        raise too_large("writes")
    return value


@pass_context
def _concat(context: Context, parts: list[Any]) -> str:
    """``a ~ b ~ c``, refused before joining if the result would be too large."""
    check_size(sum(weight(p) for p in parts))
    return _built("".join(str(p) for p in parts))


# Filters, because a filter is called directly (a call would go through the sandbox, ten times slower);
# templates cannot redefine filters, and these names are not Jinja's. They take the context only so that
# Jinja never runs them at compile time (it folds filters of constants), which would skip the count.
_HOOKS = {"_pdbench_paced": _paced, "_pdbench_emit": _emit, "_pdbench_concat": _concat}


class _Bounds(NodeTransformer):
    """Routes every loop, every piece of output and every ``~`` through the checks above: none of them
    has a sandbox hook. Output is counted wherever it is written (a template's body, a loop, a macro,
    a ``set`` or ``filter`` block, an included or imported template), so no buffer grows unseen."""

    def _hook(self, name: str, arg: nodes.Node, lineno: int) -> nodes.Filter:
        return nodes.Filter(arg, f"_pdbench_{name}", [], [], None, None, lineno=lineno)

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)  # in place: the loop's parts first, then its iterable wrapped
        node.iter = self._hook("paced", node.iter, node.lineno)
        return node

    def visit_Output(self, node: nodes.Output) -> nodes.Node:
        node.nodes = [self._hook("emit", self.visit(child), child.lineno) for child in node.nodes]
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return self._hook("concat", nodes.List(list(node.nodes), lineno=node.lineno), node.lineno)


def _bounded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` with its inputs checked, the size it would build estimated first where it can multiply
    one (see the module docstring), and its result checked."""

    if name in SAME_SIZE:

        def same_size(*args: Any, **kwargs: Any) -> Any:
            at = next((i for i, a in enumerate(args) if not _is_jinja_internal(a)), 0)
            check_filter(name, args[at] if at < len(args) else None, list(args[at + 1 :]), kwargs)
            return func(*args, **kwargs)

        return _like(same_size, func, name)

    def bounded(*given: Any, **kwargs: Any) -> Any:
        args = list(given)
        # The filtered value is the first argument, or the second for filters that take the context.
        at = next((i for i, a in enumerate(args) if not _is_jinja_internal(a)), 0)
        if at < len(args) and _is_lazy(args[at]):
            args[at] = materialize(args[at])
        for a in args + list(kwargs.values()):
            if not _is_jinja_internal(a):
                check(a)
        value = args[at] if at < len(args) else None
        check_filter(name, value, args[at + 1 :], kwargs)
        result = func(*args, **kwargs)
        return result if _is_lazy(result) else _built(result)

    return _like(bounded, func, name)


def _like(wrapper: Callable[..., Any], func: Callable[..., Any], name: str) -> Callable[..., Any]:
    # Jinja reads ``jinja_pass_arg`` (set by pass_context, pass_environment...) to know what to pass first.
    if hasattr(func, "jinja_pass_arg"):
        wrapper.jinja_pass_arg = func.jinja_pass_arg  # type: ignore[attr-defined]
    wrapper.__name__ = getattr(func, "__name__", name)
    return wrapper


def _is_lazy(value: Any) -> bool:
    return isinstance(value, Iterator)


def _is_jinja_internal(value: Any) -> bool:
    return isinstance(value, (Context, EvalContext, Environment))


class BoundedTemplate(Template):
    """A template whose every render, whole or of one block, is held to the limits (see the module docstring)."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        with _limits():
            return super().render(*args, **kwargs)

    def render_block(self, name: str, context: dict[str, Any]) -> str:
        """The text of the template's block ``name`` alone, rendered with ``context`` and held to the same limits
        as a whole render; a block inside a loop sees the loop's variables only when it is ``scoped`` and they are
        in ``context``. (How the builder extends a game's prompt by one history line, see
        :meth:`~harness.players.model.prompts.builder.PromptBuilder.prompt`.)"""
        with _limits():
            try:
                return self.environment.concat(self.blocks[name](self.new_context(context)))
            except Exception:
                self.environment.handle_exception()


@contextmanager
def _limits() -> Iterator[None]:
    """One render's budget: a fresh deadline and counts, the enclosing render's restored after."""
    saved = (_budget.deadline, _budget.written, _budget.built)
    _budget.deadline = time.monotonic() + MAX_RENDER_SECONDS
    _budget.written = _budget.built = 0
    try:
        yield
    except RecursionError:
        raise RenderLimitError("calls itself too deeply (a macro or include that never stops)") from None
    finally:
        _budget.deadline, _budget.written, _budget.built = saved


class BoundedEnvironment(SandboxedEnvironment):
    """The sandbox, with the size and time limits of the module docstring."""

    template_class = BoundedTemplate
    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.globals.pop("lipsum", None)  # generates any amount of text in one call
        self.filters = {name: _bounded_filter(name, f) for name, f in self.filters.items()}
        self.filters.update(_HOOKS)

    @overload
    def compile(
        self,
        source: str | nodes.Template,
        name: str | None = None,
        filename: str | None = None,
        raw: Literal[False] = False,
        defer_init: bool = False,
    ) -> CodeType: ...

    @overload
    def compile(
        self,
        source: str | nodes.Template,
        name: str | None = None,
        filename: str | None = None,
        raw: Literal[True] = ...,
        defer_init: bool = False,
    ) -> str: ...

    def compile(
        self,
        source: str | nodes.Template,
        name: str | None = None,
        filename: str | None = None,
        raw: bool = False,
        defer_init: bool = False,
    ) -> str | CodeType:
        """Jinja's compile, with a template's source parsed and routed through the bounds (see _Bounds)."""
        if isinstance(source, str):
            tree = self.parse(source, name, filename)
            _Bounds().visit(tree)  # in place
            tree.set_environment(self)
            source = tree
        if raw:
            return super().compile(source, name, filename, raw=True, defer_init=defer_init)
        return super().compile(source, name, filename, raw=False, defer_init=defer_init)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        check_binop(operator, left, right)
        return _built(super().call_binop(context, operator, left, right))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        _tick()
        if not isinstance(__obj, Macro):
            for a in list(args) + list(kwargs.values()):
                check(a)
            owner = getattr(__obj, "__self__", None)
            if isinstance(owner, str):
                check_str_method(owner, getattr(__obj, "__name__", ""), args, kwargs)
            elif isinstance(owner, (list, dict, set)) and len(owner) > MAX_RENDER_CHARS:
                raise too_large("holds a list or mapping of")  # one that a loop keeps extending
        result = super().call(__context, __obj, *args, **kwargs)
        return result if _is_lazy(result) else _built(result)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapper = super().wrap_str_format(value)
        if wrapper is None:
            return None
        check_format(value.__self__)
        return wrapper
