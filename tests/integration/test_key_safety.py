"""Never let a key out, through the CLI: damaged keys refused before any request, keys scrubbed from every
error text (terminal, results file, tracebacks), keys sent only where the user's own configuration says,
and `--max-cost 0` paying for nothing.

Servers are on 127.0.0.1: the loopback FakeLLMServer, or a raw one here that records every header as
sent (the fake server never keeps a credential's value) or quotes the key back as a careless proxy does.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.support.cli import pdbench, sql_json
from tests.support.llm_server import FakeLLMServer

DAMAGED = "sk-live-0123456789abcdef\nTAIL-secret-XYZ"
SOUND = 'sk-proj-AbC/dEf+GhI=jKl"q\\0123456789'
OPENAI_KEY = "sk-openai-Qm7Tz2Wx9Lp4Vb8N"
ANTHROPIC_KEY = "sk-ant-Hy3Rk6Jd1Fs5Gc0P"
KEY_ENV = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN",
           "OPENAI_CUSTOM_HEADERS", "ANTHROPIC_CUSTOM_HEADERS", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")  # fmt: skip


def pieces(key: str, n: int = 8) -> set[str]:
    """Every run of ``n`` characters of the key as typed, escaped and percent-encoded: none may show."""
    forms = {key, repr(key)[1:-1], json.dumps(key)[1:-1], quote(key, safe=""), repr(key.encode())[2:-1]}
    return {f[i : i + n] for f in forms for i in range(len(f) - n + 1)}


def leaked(text: str, key: str) -> set[str]:
    return {p for p in pieces(key) if p in text}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, base URL or SDK credential setting from the real environment."""
    for name in KEY_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PDBENCH_MAX_ATTEMPTS", "1")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def server(fake: FakeLLMServer) -> FakeLLMServer:
    fake.reset()
    fake.configure(require_key=True)
    return fake


class RawServer:
    """A loopback HTTP server that records each request's headers and body exactly as sent and answers with
    ``respond(headers) -> (status, json body)``."""

    def __init__(self, respond: Callable[[dict[str, str]], tuple[int, dict[str, Any]]]) -> None:
        self.headers: list[dict[str, str]] = []
        self.bodies: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                outer.headers.append(headers)
                outer.bodies.append(body.decode("utf-8", "replace"))
                status, body = respond(headers)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> RawServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def answer(headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    """A reply both SDKs read as an answer: the Chat Completions and the Messages shapes in one body."""
    usage = {"prompt_tokens": 5, "completion_tokens": 2, "input_tokens": 5, "output_tokens": 2}
    return 200, {
        "id": "x", "object": "chat.completion", "created": 0, "model": "m", "type": "message", "role": "assistant",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "C"}, "finish_reason": "stop"}],
        "content": [{"type": "text", "text": "C"}], "stop_reason": "end_turn", "usage": usage,
    }  # fmt: skip


def eval_args(results: Path, base_url: str, run_id: str, model: str = "openai/gpt-4o-mini") -> list[Any]:
    return ["eval", "--model", model, "--opponents", "TFT", "--rounds", "2", "--replicates", "1",
            "--base-url", base_url, "--results", results, "--run-id", run_id]  # fmt: skip


# --- point 6: damaged keys -----------------------------------------------------------------------


@pytest.mark.parametrize(("model", "variable"), [("openai/gpt-4o-mini", "OPENAI_API_KEY"),
                                                 ("anthropic/claude-haiku-4-5", "ANTHROPIC_API_KEY")])  # fmt: skip
def test_a_key_with_a_line_break_is_refused_before_any_request(
    results: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, model: str, variable: str
) -> None:
    monkeypatch.setenv(variable, DAMAGED)
    base = server.openai_base_url if model.startswith("openai") else server.anthropic_base_url
    code, out, err = pdbench(*eval_args(results, base, "damaged", model))
    assert code == 2, out + err
    assert f"the key in {variable} has a line break at position 25 of 40" in err and "one line" in err
    assert "Traceback" not in out + err and not leaked(out + err, DAMAGED)
    assert server.count() == 0 and not (results / "damaged.duckdb").exists()


def test_a_damaged_key_named_by_api_key_env_is_refused_by_name(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_LAB_KEY", "sk-lab-\u2019key-0123456789")
    config = tmp_path / "lab.yaml"
    config.write_text("""
run: {run_id: lab}
horizon: {n_rounds: 2}
experiment:
  conditions:
    - {name: c, agent_a: {model: openai/llama, base_url: "http://127.0.0.1:9/v1", api_key_env: MY_LAB_KEY},
       agent_b: {policy: TFT}}
""")
    code, out, err = pdbench("run", config, "--results", results, "--no-cache", "--allow-key-to", "127.0.0.1:9")
    assert code == 2 and "the key in MY_LAB_KEY has a character outside ASCII (U+2019) at position 8" in err
    assert not leaked(out + err, "sk-lab-\u2019key-0123456789") and not (results / "lab.duckdb").exists()


# --- point 6: a key quoted back is scrubbed in every form -------------------------------------------


def echo_key(headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    """A 401 that quotes the key back every way a proxy or a log line might: percent-encoded, JSON-escaped,
    as a Python repr, cut to a prefix and to a suffix."""
    key = headers["authorization"].removeprefix("Bearer ")
    message = (f"key {quote(key, safe='')} refused; as JSON {json.dumps(key)}; as repr {key!r}; "
               f"starts {key[:12]}...; ends ...{key[-10:]}")  # fmt: skip
    return 401, {"error": {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}}


@pytest.mark.slow
def test_a_key_quoted_back_by_the_server_reaches_no_terminal_and_no_results_file(
    results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SOUND)
    with RawServer(echo_key) as raw:
        code, out, err = pdbench(*eval_args(results, raw.url + "/v1", "echo"))
    assert code in (0, 130), out + err
    assert raw.headers and raw.headers[0]["authorization"] == f"Bearer {SOUND}"  # configured by the user: sent
    assert "HTTP 401: key *** refused" in err and not leaked(out + err, SOUND)
    stored = sql_json(
        results, "select error from calls union all select error from games union all select error from runs"
    )
    texts = [row["error"] for row in stored if row["error"]]
    assert any("key *** refused; as JSON" in t for t in texts)
    assert not leaked("\n".join(texts), SOUND)


def test_a_bugs_traceback_on_the_terminal_has_no_key(
    results: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import harness.cli
    import harness.cli.play

    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"unexpected: client({OPENAI_KEY!r}) and {quote(OPENAI_KEY)[:12]}")

    monkeypatch.setattr(harness.cli.play, "run_experiment", broken)
    monkeypatch.setattr(sys, "argv", ["pdbench", *map(str, eval_args(results, server.openai_base_url, "bug"))])
    with pytest.raises(SystemExit) as exited:
        harness.cli.main()
    err = capsys.readouterr().err
    assert exited.value.code == 1 and "Traceback" in err and "RuntimeError: unexpected: client('***') and ***" in err
    assert not leaked(err, OPENAI_KEY)


# --- point 5: keys go only where the user's configuration says ---------------------------------------


CONFIG = """
run: {{run_id: {run_id}}}
horizon: {{n_rounds: 2}}
experiment:
  conditions:
    - name: typed
      agent_a: {{model: openai/served, base_url: "{url}/v1", key_only_to_configured: true}}
      agent_b: {{model: anthropic/served, base_url: "{url}", key_only_to_configured: true}}
"""


def credentials(headers: dict[str, str]) -> dict[str, str]:
    names = ("authorization", "x-api-key", "x-gateway-token", "openai-organization", "openai-project")
    return {k: v for k, v in headers.items() if k in names}


@pytest.mark.slow
def test_a_base_url_given_by_someone_else_gets_no_key_unless_the_user_configured_it(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in (("OPENAI_API_KEY", OPENAI_KEY), ("ANTHROPIC_API_KEY", ANTHROPIC_KEY),
                        ("ANTHROPIC_AUTH_TOKEN", "tok-Ux4Ne8Ka2Ow6Yq"), ("OPENAI_ORG_ID", "org-Ls9Pq"),
                        ("OPENAI_CUSTOM_HEADERS", "X-Gateway-Token: gw-Rf5Tb1Mh7Zc3"),
                        ("ANTHROPIC_CUSTOM_HEADERS", "X-Gateway-Token: gw-Dn2Vk8Qx4Jw6")):  # fmt: skip
        monkeypatch.setenv(name, value)
    with RawServer(answer) as raw:
        config = tmp_path / "typed.yaml"
        config.write_text(CONFIG.format(run_id="keyless", url=raw.url))
        code, out, err = pdbench("run", config, "--results", results, "--no-cache")  # every request sent
        assert code == 0, out + err
        assert len(raw.headers) == 4  # 2 rounds x 2 model players, all answered
        assert [credentials(h) for h in raw.headers] == [{}] * 4
        sent = json.dumps(raw.headers)
        assert not leaked(sent, OPENAI_KEY) and not leaked(sent, ANTHROPIC_KEY) and "gw-" not in sent

        # The user points OPENAI_BASE_URL at that server: now it is theirs, and the OpenAI key goes there
        # (with what the SDK adds from the environment); Anthropic's key still does not.
        monkeypatch.setenv("OPENAI_BASE_URL", raw.url + "/v1")
        raw.headers.clear()
        config.write_text(CONFIG.format(run_id="configured", url=raw.url))
        code, out, err = pdbench("run", config, "--results", results, "--no-cache")  # every request sent
        assert code == 0, out + err
    by_key = [credentials(h).get("authorization") for h in raw.headers]
    assert sorted(map(str, by_key)) == ["Bearer " + OPENAI_KEY] * 2 + ["None"] * 2
    assert sql_json(results, "select count(*) as n from games where status = 'complete'")[0]["n"] == 2


# --- point 5: a budget of 0 pays for nothing ---------------------------------------------------------


@pytest.mark.slow
def test_max_cost_0_sends_no_request_and_uses_answers_already_in_the_cache(
    results: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    code, out, err = pdbench(*eval_args(results, server.openai_base_url, "nothing"), "--max-cost", "0")
    assert code == 130, out + err
    assert server.count() == 0
    run = sql_json(results, "select status, error from runs where run_id = 'nothing'")[0]
    assert run == {"status": "interrupted", "error": "the cost limit of $0 was reached"}

    code, out, err = pdbench(*eval_args(results, server.openai_base_url, "paid"))
    assert code == 0, out + err
    paid = server.count()
    assert paid == 2

    code, out, err = pdbench(*eval_args(results, server.openai_base_url, "cached"), "--max-cost", "0")
    assert code == 0, out + err
    assert server.count() == paid  # every answer came from the cache, which costs nothing
    calls = sql_json(results, "select count(*) as n, count(*) filter (where cached) as cached, sum(cost_usd) as "
                              "cost from calls where run_id = 'cached'")[0]  # fmt: skip
    assert calls == {"n": 2, "cached": 2, "cost": 0.0}


# --- point 5: `pdbench ui --host` beyond loopback ----------------------------------------------------


@pytest.mark.parametrize(("host", "warned"), [("127.0.0.1", False), ("localhost", False), ("::1", False),
                                              ("127.0.0.2", False), ("0.0.0.0", True), ("192.168.1.20", True),
                                              ("::", True), ("dashboard.lan", True)])  # fmt: skip
def test_ui_on_an_address_beyond_loopback_warns_that_visitors_can_spend_the_keys(
    results: Path, monkeypatch: pytest.MonkeyPatch, host: str, warned: bool
) -> None:
    import harness.ui.launch

    served: list[tuple[Path, int, str]] = []
    monkeypatch.setattr(harness.ui.launch, "serve", lambda folder, port, host: served.append((folder, port, host)))
    code, out, err = pdbench("ui", "--results", results, "--host", host, "--port", "8599")
    assert code == 0, out + err
    assert served == [(results.resolve(), 8599, host)]
    if warned:
        assert f"warning: serving on {host}, beyond this machine" in err
        assert "can run experiments that spend your API keys" in err and "127.0.0.1" in err
    else:
        assert err == ""
