"""Issue 19, point 12: inputs that used to crash a run, or to be read into something they do not say, each
through the command line: refused before any run with a clear one-paragraph error, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.test_bad_inputs import TFT_VS_ALLD, config, refused

BAD_URLS = {
    "http://[::1": "it cannot be read (Invalid IPv6 URL)",  # used to print httpx2's traceback
    "http://127.0.0.1:99999/v1": "its port is not a number from 1 to 65535",  # failed every game: "ExceptionGroup"
    "http://127.0.0.1:0/v1": "its port is not a number from 1 to 65535",
    "http:///v1": "it names no host",
    "http://127.0.0.1:8000/my v1": "it holds spaces or control characters",
}


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_base_url_that_is_no_server_is_refused_before_any_run(
    url: str, tmp_path: Path, results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-key-1234")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    why = BAD_URLS[url]
    play = ("--opponents", "TFT", "--rounds", "2", "--results", results)
    refused("eval", "--model", "openai/m", "--base-url", url, *play, says=[f"base_url {url!r} is not a server's", why])
    exp = config(tmp_path, f"experiment:\n  conditions:\n    - {{agent_a: {{model: openai/m, base_url: '{url}'}}, "
                           "agent_b: {policy: TFT}}\n")  # fmt: skip
    refused("run", exp, "--results", results, says=why)
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    refused("eval", "--model", "openai/m", *play, says=[f"OPENAI_BASE_URL {url!r} is not a server's URL", why])
    assert not list(results.glob("*.duckdb"))  # no run was started


@pytest.mark.parametrize(
    ("where", "what"),
    [
        ("{name: 'evil\\e[2J\\e[31mred', agent_a: {policy: TFT}, agent_b: {policy: ALLD}}", "U+001B"),  # clears
        ("{name: 'a\\x9b2Jb', agent_a: {policy: TFT}, agent_b: {policy: ALLD}}", "U+009B"),  # the one-byte CSI
        ("{name: 'two\\nlines', agent_a: {policy: TFT}, agent_b: {policy: ALLD}}", "a line break"),
        ("{agent_a: {policy: TFT, name: 'T\\u202eFT'}, agent_b: {policy: ALLD}}", "U+202E"),  # text reversed
        ("{agent_a: {policy: TFT}, agent_b: {model: 'mock/tft\\e]0;title\\a'}}", "U+001B"),
    ],
)
def test_a_name_with_control_characters_is_refused_where_it_enters(
    where: str, what: str, tmp_path: Path, results: Path
) -> None:
    # They used to reach the terminal as they were: the screen cleared, the text turned red, a title was set.
    exp = config(tmp_path, f"experiment:\n  conditions:\n    - {where.replace(chr(39), chr(34))}\n")
    for command in (("validate", exp), ("run", exp, "--results", results)):
        err = refused(*command, says=[what, "a name is shown as it is written"])
        assert "\x1b" not in err and "\x9b" not in err and "\u202e" not in err  # the refusal shows it escaped
    assert not list(results.glob("*.duckdb"))


def test_a_model_name_with_an_escape_sequence_is_refused_on_the_command_line(results: Path) -> None:
    err = refused("eval", "--model", "mock/tft\x1b[2J", "--results", results, says="U+001B")
    assert "\x1b" not in err


@pytest.mark.parametrize(
    "text",
    [
        "horizon: {n_rounds: null}\n" + TFT_VS_ALLD,
        "horizon:\n  type: fixed\n  n_rounds:\n" + TFT_VS_ALLD,  # the same, as YAML often writes it
        "experiment:\n  conditions:\n    - {agent_a: {policy: TFT}, agent_b: {policy: ALLD}, horizon: {n_rounds: ~}}\n",
    ],
)
def test_an_empty_number_of_rounds_is_refused_not_read_as_the_default(text: str, tmp_path: Path, results: Path) -> None:
    # It used to mean 50 rounds without a word.
    exp = config(tmp_path, text)
    says = ["n_rounds is empty (null): give the number of rounds", "leave n_rounds out for the default of 50"]
    refused("validate", exp, says=says)
    refused("run", exp, "--results", results, says=says)
    assert not list(results.glob("*.duckdb"))


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--workers", "1"], "--workers only applies to a sweep"),
        (["--seeds", "3"], "--seeds only applies to a sweep"),
        (["--seeds", "2", "--ray", "127.0.0.1:1"], "--seeds and --ray only apply to a sweep"),
    ],
)
def test_sweep_options_without_a_sweep_are_refused(extra: list[str], says: str, results: Path) -> None:
    # `--workers 1` used to turn one evolution into a sweep of one cell, under another run id.
    refused("evolve", "--counts", "2,2,2,2", "--generations", "3", *extra, "--results", results, "--run-id", "one",
            says=[says, "add --sweep KEY=V1,V2"])  # fmt: skip
    assert not list(results.glob("*.duckdb"))


def test_a_price_table_that_is_none_is_refused_even_when_no_price_is_needed(tmp_path: Path, results: Path) -> None:
    # It used to be read only by a run that needed a price: a strategy tournament took /etc/passwd.
    passwd = config(tmp_path, "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n", "passwd")
    says = [f"{passwd} is not a price table", "{input: $/Mtok, output: $/Mtok}"]
    refused("tournament", "--players", "TFT,ALLD", "--rounds", "2", "--prices", passwd, "--results", results, says=says)
    refused("evolve", "--counts", "2,2", "--players", "TFT,ALLD", "--prices", passwd, "--results", results, says=says)
    refused("eval", "--model", "mock/tft", "--prices", tmp_path / "missing.yaml", "--results", results,
            says="cannot read the price table")  # fmt: skip
    assert not list(results.glob("*.duckdb"))
