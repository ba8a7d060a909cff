"""The bounded template sandbox: every size limit exactly at its edge, the time limit, and templates that stay
within the limits rendering exactly as plain Jinja renders them (the checks must change nothing else).

Sizes here stay near the 1,000,000-character limit, so a broken check fails the test rather than the machine;
the end-to-end bombs (two billion characters, loops for ever) run in a bounded child process in
tests/integration/test_no_hang.py."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from jinja2 import DictLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from harness.players.model.prompts import sandbox as template_bounds
from harness.players.model.prompts.sandbox import MAX_RENDER_CHARS, BoundedEnvironment, RenderLimitError

LIMIT = MAX_RENDER_CHARS
assert LIMIT == 1_000_000  # the figures below are written for it


def env(templates: dict[str, str] | None = None) -> BoundedEnvironment:
    return BoundedEnvironment(loader=DictLoader(templates or {}), undefined=StrictUndefined, autoescape=False)


def render(source: str, **context: object) -> str:
    return env().from_string(source).render(context)


def refused(source: str, says: str, **context: object) -> None:
    with pytest.raises(RenderLimitError, match=says):
        render(source, **context)


# -- every limit at its edge ---------------------------------------------------------------------------
def test_one_value_may_have_a_million_characters_and_not_one_more() -> None:
    assert len(render('{{ "x" * 1000000 }}')) == LIMIT
    refused('{{ "x" * 1000001 }}', "would build a value of more than 1,000,000")
    refused('{{ 1000001 * "x" }}', "would build a value of more than 1,000,000")
    assert len(render('{{ ["ab"] * 100000 }}')) == 6 * 100000  # "['ab', 'ab', ..., 'ab']": short strings, fine
    refused('{{ ["x" * 1000] * 1000 }}', "would build a value of more than")  # a thousand refs to 1,000 chars


def test_everything_written_together_is_limited_too() -> None:
    ten = '{% for i in range(10) %}{{ "x" * 100000 }}{% endfor %}'
    assert len(render(ten)) == LIMIT
    refused(ten.replace("range(10)", "range(11)"), "writes more than 1,000,000")
    refused('{% set a = "x" * 600000 %}{{ a }}{{ a }}', "writes more than 1,000,000")  # no loop at all


def test_text_repeated_by_a_loop_counts_even_inside_a_set_block() -> None:
    body = "y" * 1000
    ok = f"{{% set s %}}{{% for i in range(999) %}}{body}{{% endfor %}}{{% endset %}}{{{{ s|length }}}}"
    assert render(ok) == "999000"
    refused(ok.replace("range(999)", "range(1001)"), "writes more than 1,000,000")


def test_text_of_a_macro_or_an_included_template_counts_at_each_call() -> None:
    body = "z" * 1000
    macro = f"{{% macro m() %}}{body}{{% endmacro %}}{{% for i in range(1001) %}}{{{{ m() }}}}{{% endfor %}}"
    refused(macro, "writes more than 1,000,000")
    included = env({"lit.j2": body, "main.j2": '{% for i in range(1001) %}{% include "lit.j2" %}{% endfor %}'})
    with pytest.raises(RenderLimitError, match="writes more than 1,000,000"):
        included.get_template("main.j2").render()
    assert len(env({"lit.j2": body, "main.j2": '{% include "lit.j2" %}'}).get_template("main.j2").render()) == 1000


def test_text_counts_wherever_it_is_buffered_before_it_is_written() -> None:
    """A filter block, an imported template's body and a caller all collect their text before writing it;
    each piece is counted as it is made, so none of them may collect more than the limit."""
    body = "w" * 1000
    loop = f"{{% for i in range(N) %}}{body}{{% endfor %}}"
    filtered = f"{{% filter upper %}}{loop}{{% endfilter %}}"
    assert len(render(filtered.replace("N", "999"))) == 999_000
    refused(filtered.replace("N", "1001"), "writes more than 1,000,000")
    imported = env({"big.j2": loop.replace("N", "1001"), "main.j2": '{% import "big.j2" as big %}ok'})
    with pytest.raises(RenderLimitError, match="writes more than 1,000,000"):
        imported.get_template("main.j2").render()
    caller = f"{{% macro m() %}}{{{{ caller()|length }}}}{{% endmacro %}}{{% call m() %}}{loop}{{% endcall %}}"
    assert render(caller.replace("N", "999")) == "999000"
    refused(caller.replace("N", "1001"), "writes more than 1,000,000")


def test_all_values_built_in_one_render_are_limited_to_ten_million_characters() -> None:
    """Each value is within its limit, but a loop keeps them: without a total, memory would have no bound."""
    keep = '{% set d = {} %}{% for i in range(N) %}{{ d.update({i: "x" * 900000}) }}{% endfor %}{{ d|length }}'
    assert render(keep.replace("N", "9")) == "None" * 9 + "9"
    refused(keep.replace("N", "12"), "builds more than 10,000,000 characters of values in all")
    # References to one value cost nothing: a list of a hundred of them is counted when written, not kept.
    assert render('{% set a = "x" * 100000 %}{% set l = [a] * 5 %}{{ l|length }}') == "5"


def test_a_render_may_take_the_time_limit_and_no_more(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(template_bounds, "MAX_RENDER_SECONDS", 0.3)
    for source in [
        "{% set r = range(100000) %}{% for i in r %}{% for j in r %}{% endfor %}{% endfor %}",
        '{% set s = "x" * 100000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}',
        "{% macro f(n) %}{% for i in range(3) %}{{ f(n) if false else '' }}{% endfor %}{{ f(n + 1) if n < 50 "
        "else '' }}{% endmacro %}{% for i in range(100000) %}{{ f(0) }}{% endfor %}",
    ]:
        started = time.monotonic()
        with pytest.raises(RenderLimitError, match=r"took longer than 0\.3 s"):
            render(source)
        assert time.monotonic() - started < 3


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ('{{ "%2000000000s" % "x" }}', "format width of 2,000,000,000"),
        ('{{ "%.20000f" % 1.5 }}', "format width of 20,000"),
        ('{{ "%*s" % (2000000000, "x") }}', "'\\*' width"),
        ('{{ "%s"|format("x") ~ "%9999999d"|format(1) }}', "format width of 9,999,999"),
        ('{{ "{:>2000000000}".format("x") }}', "format width of 2,000,000,000"),
        ('{{ "{:{w}}".format("x", w=2000000000) }}', "from a variable"),
        ('{{ "x"|center(2000000000) }}', "more than 1,000,000"),
        ('{{ "x".center(2000000000) }}', "more than 1,000,000"),
        ('{{ "x".ljust(1000001) }}', "more than 1,000,000"),
        ('{{ ("\t" * 1000).expandtabs(1001) }}', "more than 1,000,000"),
        ('{{ ("x" * 1000)|replace("", "y" * 1000) }}', "more than 1,000,000"),
        ('{{ ("x" * 1000).replace("x", "y" * 1001) }}', "more than 1,000,000"),
        ('{{ range(1000)|join("y" * 1001) }}', "more than 1,000,000"),
        ('{{ ("y" * 1001).join(range(1000)|map("string")) }}', "more than 1,000,000"),
        ('{{ ("a\n" * 1000)|indent(1000) }}', "more than 1,000,000"),
        ('{{ ("a " * 1000)|wordwrap(1, wrapstring="y" * 1000) }}', "more than 1,000,000"),
        ('{{ range(10)|batch(2000000000, "x")|list }}', "more than 1,000,000"),
        ("{{ range(10)|slice(2000000000)|list }}", "more than 1,000,000"),
        ("{{ range(100)|tojson(indent=101) }}", "indent of 101"),
        ("{{ [[1] * 1000] * 1000|sum(start=[]) }}", "sum adds numbers only"),
        ("{{ 10 ** 100000 }}", "power of more than 100,000 bits"),
        ("{% set n = namespace(x=3) %}{% for i in range(40) %}{% set n.x = n.x * n.x %}{% endfor %}", "100,000 bits"),
        ('{% set n = namespace(s="x") %}{% for i in range(60) %}{% set n.s = n.s ~ n.s %}{% endfor %}', "1,000,000"),
        ("{% set l = [1] %}{% for i in range(60) %}{{ l.extend(l) }}{% endfor %}", "1,000,000"),
        ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "calls itself too deeply"),
    ],
)
def test_operations_that_multiply_a_size_are_stopped_before_they_run(source: str, says: str) -> None:
    started = time.monotonic()
    refused(source, says)
    assert time.monotonic() - started < 3


def test_lipsum_is_not_available() -> None:
    with pytest.raises(Exception, match="lipsum"):
        render("{{ lipsum(100000000) }}")


# -- within the limits, exactly what plain Jinja renders ---------------------------------------------------
TEMPLATES = {
    "main.j2": """{% import "macros.j2" as m %}{% set first, second = options %}
{%- for row in rows if row.n is odd %}{{ loop.index }}/{{ loop.length }}:{{ row.name|upper }}{{ ", " if not loop.last }}
{%- else %}none{% endfor %}
{% for x in [] %}{{ x }}{% else %}empty{% endfor %}
{% set ns = namespace(total=0) %}{% for row in rows %}{% set ns.total = ns.total + row.n %}{% endfor %}{{ ns.total }}
{% set block %}{% for i in range(3) %}[{{ i }}]{% endfor %}{% endset %}{{ block|replace("[", "(") }}
{{ m.row(first) }} {{ m.row(second) }} {% call m.wrap() %}inside{% endcall %}
{% for node in tree recursive %}{{ node.name }}{% if node.kids %}({{ loop(node.kids) }}){% endif %}{% endfor %}
{{ "%5.1f|%-4s|%03d" % (3.14159, "ab", 7) }} {{ "{:>6}|{:.2f}".format("x", 2.5) }} {{ "a" ~ 1 ~ none }}
{{ rows|map(attribute="name")|join("+") }} {{ rows|sum(attribute="n") }} {{ "x" * 3 }} {{ [1, 2] * 2 }} {{ 2 ** 10 }}
{{ rows|selectattr("n", "gt", 1)|list|length }} {{ "Text to wrap here"|wordwrap(6) }} {{ "a\nb"|indent(2, true) }}
{{ range(5)|batch(2)|list }} {{ range(5)|slice(2)|list }} {{ {"b": 1, "a": 2}|dictsort }} {{ rows[0].name.center(9) }}
{% include "part.j2" %}{{ rows|tojson }}""",
    "macros.j2": """{% macro row(o) %}<{{ o.label }}>{% endmacro %}{% macro wrap() %}[{{ caller() }}]{% endmacro %}""",
    "part.j2": "part {{ options|length }}",
}
CONTEXT = {
    "rows": [{"name": "ann", "n": 1}, {"name": "bob", "n": 2}, {"name": "cy", "n": 3}],
    "options": [{"label": "C"}, {"label": "D"}],
    "tree": [{"name": "a", "kids": [{"name": "b", "kids": []}, {"name": "c", "kids": [{"name": "d", "kids": []}]}]}],
}


def test_templates_within_the_limits_render_as_plain_jinja_renders_them() -> None:
    plain = SandboxedEnvironment(loader=DictLoader(TEMPLATES), undefined=StrictUndefined, autoescape=False)
    expected = plain.get_template("main.j2").render(CONTEXT)
    assert env(TEMPLATES).get_template("main.j2").render(CONTEXT) == expected
    assert "1/2:ANN, 2/2:CY" in expected and "empty" in expected and "a(bc(d))" in expected  # the branches ran


def test_with_autoescaping_values_are_escaped_and_template_text_is_not_as_in_plain_jinja() -> None:
    context = {**CONTEXT, "rows": [{"name": "<b>ann</b>", "n": 1}, {"name": "bob&", "n": 2}, {"name": "cy", "n": 3}]}
    templates = {**TEMPLATES, "part.j2": "<i>part</i> {{ options|length }}"}
    plain = SandboxedEnvironment(loader=DictLoader(templates), undefined=StrictUndefined, autoescape=True)
    bounded = BoundedEnvironment(loader=DictLoader(templates), undefined=StrictUndefined, autoescape=True)
    expected = plain.get_template("main.j2").render(context)
    assert bounded.get_template("main.j2").render(context) == expected
    assert "&lt;B&gt;ANN&lt;/B&gt;" in expected and "<i>part</i>" in expected


def test_the_count_starts_afresh_at_each_render() -> None:
    template = env().from_string('{% for i in range(9) %}{{ "x" * 100000 }}{% endfor %}')
    for _ in range(3):
        assert len(template.render()) == 900_000


def test_one_block_rendered_alone_is_held_to_the_same_limits_and_counts_afresh() -> None:
    template = env().from_string(
        '{% block rules %}{% for i in range(n) %}{{ "x" * 100000 }}{% endfor %}{% endblock %}'
        "{% for r in rows %}{% block line scoped %}{{ r }};{% endblock %}{% endfor %}"
    )
    assert template.render(n=2, rows=[1, 2]) == "x" * 200_000 + "1;2;"
    for _ in range(2):
        assert len(template.render_block("rules", {"n": 10})) == LIMIT  # type: ignore[attr-defined]
    assert template.render_block("line", {"r": 3}) == "3;"  # type: ignore[attr-defined]
    with pytest.raises(RenderLimitError, match="writes more than 1,000,000"):
        template.render_block("rules", {"n": 11})  # type: ignore[attr-defined]


def test_a_persona_file_is_bounded_like_a_template(tmp_path: Path) -> None:
    from harness.errors import ConfigError
    from harness.players.model.prompts.builder import PromptBuilder, PromptSettings

    persona = tmp_path / "huge.md"
    persona.write_text('{{ "x" * 2000000000 }}')
    with pytest.raises(ConfigError, match="prompt template 'persona' would build a value of more than 1,000,000"):
        PromptBuilder(PromptSettings(persona=str(persona))).check()
