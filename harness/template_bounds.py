"""The Jinja environment prompt templates run in: sandboxed, and bounded in size and time.

Jinja's sandbox stops a template from reaching Python's internals, but not from asking for
``{{ "x" * 2000000000 }}`` or looping for ever, and a prompt template is code a user writes. So every
render of a :class:`BoundedEnvironment` template is held to two limits, and stopped with a
:class:`RenderLimitError` when it passes one:

* **size**: no value a template builds, and not all it writes together, may exceed
  :data:`MAX_RENDER_CHARS` characters, and all the values it builds together not
  :data:`MAX_BUILT_CHARS`. Operations that can multiply a size (``*``, ``**``, ``%``,
  ``str.format``, ``~``, the filters and string methods that pad, repeat, join or replace) are sized
  *before* they run, from their operands (:mod:`harness.template_sizes`); the rest on their result;
* **time**: a render may take at most :data:`MAX_RENDER_SECONDS`. The clock is read at every loop
  iteration and call (a macro that calls itself): without a loop or a call, a template does a bounded
  amount of work, since every operation is bounded in size. A loop's iterable is wrapped at compile
  time, since plain ``for`` has no sandbox hook.

Values come from the context (sized by PDBench), from literals (bounded by the template's length) or
from operations, and every operation is checked, so attribute lookups need no check of their own: a
namespace that a loop doubles is stopped at the ``~``, ``+`` or call that doubles it.

Templates are otherwise rendered the ordinary way (``template.render(context)``), and the built-in
templates render in well under a millisecond, so the limits only ever stop a template that would
otherwise hang the run or exhaust memory.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from jinja2 import Template, nodes, pass_context
from jinja2.environment import Environment
from jinja2.nodes import EvalContext
from jinja2.runtime import Context, Macro
from jinja2.sandbox import SandboxedEnvironment
from jinja2.visitor import NodeTransformer

from harness.template_sizes import (
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


def _tick() -> None:
    deadline = _budget.deadline
    if deadline is not None and time.monotonic() > deadline:
        raise RenderLimitError(
            f"took longer than {MAX_RENDER_SECONDS:g} s to render (the built-in templates take under a "
            "millisecond): look for loops inside loops in it"
        )


def _built(value: Any) -> Any:
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
def _charge(chars: int) -> None:
    budget = _budget
    budget.written += chars
    if budget.written > MAX_RENDER_CHARS:
        raise too_large("writes")


@pass_context
def _paced(context: Context, iterable: Iterable[Any], literal_chars: int) -> Iterator[Any]:
    """A loop's iterable, with the clock read and the loop body's own text counted at every iteration."""
    for item in iterable:
        _tick()
        _charge(literal_chars)
        yield item


@pass_context
def _emit(context: Context, value: Any) -> Any:
    """One piece of output (``{{ value }}``, or text in a macro), counted against the render's size limit.
    (No clock here: output outside a loop or call is bounded by the template's length.)"""
    budget = _budget  # _charge, inlined: this runs for every {{ value }} of every prompt
    budget.written += len(value) if type(value) is str else weight(value)
    if budget.written > MAX_RENDER_CHARS:
        raise too_large("writes")
    return value


@pass_context
def _line(context: Context, parts: list[Any], counted: int) -> str:
    """One output statement at once (its text and values joined, as Jinja would write them one by one):
    one call instead of one per value. ``counted`` characters of it, its template text, are counted
    already (see _Bounds)."""
    total = 0
    for part in parts:
        if type(part) is not str:
            total += weight(part)  # before str(): a list's text can be far longer than the list
    if total > MAX_RENDER_CHARS:
        raise too_large("writes")
    text = "".join([part if type(part) is str else str(part) for part in parts])
    budget = _budget
    budget.written += len(text) - counted
    if budget.written > MAX_RENDER_CHARS:
        raise too_large("writes")
    return text


@pass_context
def _text(context: Context, literal_chars: int) -> str:
    """Counts the text a template writes outside loops and macros, once, as its render starts."""
    _charge(literal_chars)
    return ""


@pass_context
def _concat(context: Context, parts: list[Any]) -> str:
    """``a ~ b ~ c``, refused before joining if the result would be too large."""
    check_size(sum(weight(p) for p in parts))
    return _built("".join(str(p) for p in parts))


# Filters, because a filter is called directly (a call would go through the sandbox, ten times slower);
# templates cannot redefine filters, and these names are not Jinja's. They take the context only so that
# Jinja never runs them at compile time (it folds filters of constants), which would skip the count.
_HOOKS = {"_pdbench_paced": _paced, "_pdbench_emit": _emit, "_pdbench_line": _line, "_pdbench_text": _text,
          "_pdbench_concat": _concat}  # fmt: skip
_OWN_BODY = (nodes.Macro, nodes.CallBlock, nodes.Block)  # bodies that run when called, any number of times


def _text_size(body: list[nodes.Node]) -> int:
    """Characters of template text in ``body`` that run with it: not inside a loop's body (counted per
    iteration) or a macro, call block or block (whose text is counted piece by piece). Text in both
    branches of an ``if`` counts, so this is an upper bound."""
    total = 0
    stack: list[nodes.Node] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, nodes.TemplateData):
            total += len(node.data)
        elif isinstance(node, nodes.For):
            stack.extend(node.else_)
        elif not isinstance(node, _OWN_BODY):
            stack.extend(node.iter_child_nodes())
    return total


class _Bounds(NodeTransformer):
    """Routes loops, output and ``~`` through the checks above (none of them has a sandbox hook).

    Template text is counted without a call per piece where it can be: the text of a template's body
    once as it starts, the text of a loop's body once per iteration. Text in macros, call blocks, blocks
    and recursive loops is counted piece by piece.
    """

    def __init__(self, autoescape: object) -> None:
        self._piecewise = [False]
        self._autoescape = autoescape

    def _hook(self, name: str, arg: nodes.Expr, lineno: int, *args: nodes.Expr) -> nodes.Filter:
        return nodes.Filter(arg, f"_pdbench_{name}", list(args), [], None, None, lineno=lineno)

    def _visit_body(self, body: list[nodes.Node], piecewise: bool) -> list[nodes.Node]:
        self._piecewise.append(piecewise)
        try:
            return [self.visit(n) for n in body]
        finally:
            self._piecewise.pop()

    def visit_Template(self, node: nodes.Template) -> nodes.Node:
        size = _text_size(node.body)
        node.body = self._visit_body(node.body, False)
        node.body.insert(0, nodes.Output([self._hook("text", nodes.Const(size), 1)], lineno=1))
        return node

    def visit_For(self, node: nodes.For) -> nodes.Node:
        node.iter = self.visit(node.iter)
        if node.test is not None:
            node.test = self.visit(node.test)
        node.else_ = self._visit_body(node.else_, self._piecewise[-1])
        size = 0 if node.recursive else _text_size(node.body)
        node.body = self._visit_body(node.body, node.recursive)
        node.iter = self._hook("paced", node.iter, node.lineno, nodes.Const(size))
        return node

    def _own_body(self, node: nodes.Macro | nodes.CallBlock | nodes.Block) -> nodes.Node:
        for field in node.fields:
            if field != "body":
                value = getattr(node, field)
                if isinstance(value, nodes.Node):
                    setattr(node, field, self.visit(value))
                elif isinstance(value, list):
                    setattr(node, field, [self.visit(v) if isinstance(v, nodes.Node) else v for v in value])
        node.body = self._visit_body(node.body, True)
        return node

    visit_Macro = visit_CallBlock = visit_Block = _own_body

    def visit_Output(self, node: nodes.Output) -> nodes.Node:
        piecewise = self._piecewise[-1]
        children = [c if isinstance(c, nodes.TemplateData) else self.visit(c) for c in node.nodes]
        if self._autoescape is False and any(not isinstance(c, nodes.TemplateData) for c in children):
            # Without autoescaping Jinja writes str(value) for each: the same text, joined in one call.
            counted = 0 if piecewise else sum(len(c.data) for c in children if isinstance(c, nodes.TemplateData))
            parts = nodes.List(children, lineno=node.lineno)
            node.nodes = [self._hook("line", parts, node.lineno, nodes.Const(counted))]
            return node
        node.nodes = [
            child
            if isinstance(child, nodes.TemplateData) and not piecewise
            else self._hook("emit", child, child.lineno)
            for child in children
        ]
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        node = self.generic_visit(node)
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

    def bounded(*args: Any, **kwargs: Any) -> Any:
        args = list(args)
        # The filtered value is the first argument, or the second for filters that take the context.
        at = next((i for i, a in enumerate(args) if not _is_jinja_internal(a)), 0)
        if at < len(args) and _is_lazy(args[at]):
            args[at] = materialize(args[at])
        for a in list(args) + list(kwargs.values()):
            if not _is_jinja_internal(a):
                check(a)
        value = args[at] if at < len(args) else None
        rest = args[at + 1 :]
        check_filter(name, value, rest, kwargs)
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
    """A template whose every render is held to the limits (see the module docstring)."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        saved = (_budget.deadline, _budget.written, _budget.built)
        _budget.deadline = time.monotonic() + MAX_RENDER_SECONDS
        _budget.written = _budget.built = 0
        try:
            return super().render(*args, **kwargs)
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

    def compile(self, source: Any, name: str | None = None, filename: str | None = None, raw: bool = False,
                defer_init: bool = False) -> Any:  # fmt: skip
        if isinstance(source, str):
            source = self.parse(source, name, filename)
            source = _Bounds(self.autoescape).visit(source)
            source.set_environment(self)
        return super().compile(source, name, filename, raw, defer_init)

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
