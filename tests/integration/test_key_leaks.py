"""No configured key is sent or stored by a config, through the CLI (issue 19, points 5, 6 and 12):

* prompt templates are read only from template files (``.j2``) of the user's own folders: a config naming
  ``/proc/self/environ``, ``/etc/passwd``, ``~/.aws/credentials`` or a link to one is refused at validate;
* a prompt that holds a configured key anyway (pasted into a template) is never sent: its game fails with
  the reason, and neither the server, the results file nor the cache sees the key;
* a key the model's reply quotes, and a base64 form of a key an error quotes, are stored masked;
* a key named by ``api_key_env`` goes to a base URL from the file only with ``--allow-key-to``.

Servers are on 127.0.0.1 (the raw recording server of test_key_safety).
"""

from __future__ import annotations

import base64
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_key_safety import KEY_ENV, RawServer, answer, leaked
from tests.support.cli import pdbench, sql_json

OPENAI_KEY = "sk-openai-Vd4Kp8Xs2Nq6Hm0R"
ANTHROPIC_KEY = "sk-ant-Tb7Wc3Lz9Jf5Ge1Y"
LAB_KEY = "lab-secret-Zr6Mv2Qa8Uk4Pn0X"
KEYS = (OPENAI_KEY, ANTHROPIC_KEY, LAB_KEY)
ROUND = "Round {{ round }}: {{ labels.cooperate }} or {{ labels.defect }}?\n"


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two provider keys and a lab key in the environment, nothing else from the real one."""
    for name in KEY_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PDBENCH_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("MY_LAB_KEY", LAB_KEY)


def experiment(tmp_path: Path, agent: str, run_id: str = "leak") -> Path:
    path = tmp_path / f"{run_id}.yaml"
    path.write_text(f"run: {{run_id: {run_id}}}\nhorizon: {{n_rounds: 2}}\nexperiment:\n  conditions:\n"
                    f"    - {{name: c, agent_a: {agent}, agent_b: {{policy: TFT}}}}\n")  # fmt: skip
    return path


def stored_text(results: Path) -> str:
    """Every text the run files and the response cache hold where a key could end up."""
    rows = sql_json(results, "select request_json::varchar as t from calls union all select response_text from calls "
                             "union all select error from calls union all select error from games "
                             "union all select error from runs")  # fmt: skip
    texts = [str(r["t"]) for r in rows if r["t"]]
    cache = results / ".cache" / "responses.sqlite"
    if cache.exists():
        with sqlite3.connect(cache) as conn:
            texts += list(conn.iterdump())
    return "\n".join(texts)


def no_key_in(*texts: str) -> bool:
    return not any(leaked(text, key) for text in texts for key in KEYS)


# --- point 5: templates come only from template files in the user's own folders ---------------------


def dot_folder(tmp_path: Path) -> tuple[str, str]:
    folder = tmp_path / ".aws"
    folder.mkdir()
    (folder / "credentials.j2").write_text(f"aws_secret_access_key = {LAB_KEY}\n" + ROUND)
    return str(folder), "credentials.j2"


def link_to_environ(tmp_path: Path) -> tuple[str, str]:
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "system.j2").symlink_to("/proc/self/environ")
    return str(folder), "system.j2"


@pytest.mark.parametrize(
    ("where", "says"),
    [
        (lambda _: ("/proc/self", "environ"), "prompt template_dir '/proc/self' is under /proc"),
        (lambda _: ("/etc", "passwd"), "prompt template 'passwd' does not end in .j2"),
        (dot_folder, "has '.aws' in its real path"),
        (link_to_environ, "system.j2' is under /proc"),
    ],
    ids=["proc-environ", "etc-passwd", "dot-folder", "link-to-environ"],
)
def test_a_template_that_is_not_the_users_own_template_file_is_refused_before_any_run(
    tmp_path: Path, results: Path, where: Any, says: str
) -> None:
    folder, name = where(tmp_path)
    exp = experiment(tmp_path, f"{{model: mock/tft, prompts: {{template_dir: '{folder}', system_template: '{name}'}}}}")
    code, out, err = pdbench("validate", exp)
    assert code == 2 and says in " ".join(err.split()), out + err
    code, out, err = pdbench("run", exp, "--results", results)
    assert code == 2 and says in " ".join(err.split()), out + err
    assert "Traceback" not in err and no_key_in(out + err) and not (results / "leak.duckdb").exists()


def test_a_persona_file_in_a_dot_folder_is_refused(tmp_path: Path) -> None:
    secrets = tmp_path / ".secrets"
    secrets.mkdir()
    (secrets / "notes.md").write_text(f"My key is {OPENAI_KEY}.")
    code, out, err = pdbench("validate", experiment(tmp_path, f"{{model: mock/tft, persona: '{secrets}/notes.md'}}"))
    assert code == 2 and "has '.secrets' in its real path" in " ".join(err.split()), out + err
    assert no_key_in(out + err)


# --- point 5: a prompt holding a configured key is never sent, and nothing of it stored ----------------


@pytest.mark.slow
@pytest.mark.parametrize("key_env", ["OPENAI_API_KEY", "MY_LAB_KEY"])
def test_a_prompt_holding_a_configured_key_is_not_sent_and_its_game_fails_with_the_reason(
    tmp_path: Path, results: Path, key_env: str
) -> None:
    """A key pasted into a template the rules accept: the player's own key, from the environment or named by
    api_key_env (another provider's key, which the player does not use, is in the next test)."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "system.j2").write_text(f"You play a game. (debug: {os.environ[key_env]})\n")
    with RawServer(answer) as raw:
        named = ", api_key_env: MY_LAB_KEY" if key_env == "MY_LAB_KEY" else ""
        agent = f"{{model: openai/served, base_url: '{raw.url}/v1'{named}, prompts: {{template_dir: '{folder}'}}}}"
        code, out, err = pdbench(
            "run", experiment(tmp_path, agent), "--results", results, "--allow-key-to", raw.url.removeprefix("http://")
        )
    assert code == 0 and "1 game failed" in out + err, out + err  # the run goes on; the game failed
    assert raw.bodies == []  # no request reached the server
    games = sql_json(results, "select status, failure, error from games")
    assert [(g["status"], g["failure"]) for g in games] == [("failed", "permanent")]
    assert f"openai/served: the prompt holds the key in {key_env}, so it was not sent" in games[0]["error"]
    assert sql_json(results, "select count(*) as n from calls")[0]["n"] == 0
    assert no_key_in(out + err, stored_text(results))


def test_a_mock_player_whose_persona_holds_a_key_stores_nothing_of_it(tmp_path: Path, results: Path) -> None:
    """The mock model sends nothing, but its prompts would be stored in the results file and the cache; the key
    is one the environment holds for another provider, which no player of the run uses."""
    persona = tmp_path / "persona.md"
    persona.write_text(f"You are careful. Your Anthropic key is {ANTHROPIC_KEY}.")
    code, out, err = pdbench(
        "run", experiment(tmp_path, f"{{model: mock/tft, persona: '{persona}'}}"), "--results", results
    )
    assert code == 0 and "1 game failed" in out + err, out + err
    error = sql_json(results, "select error from games")[0]["error"]
    assert "mock/tft: the prompt holds the key in ANTHROPIC_API_KEY, so it was not sent and is not stored" in error
    assert no_key_in(out + err, stored_text(results))


# --- point 12: keys in a reply, base64 keys in an error ---------------------------------------------------


def quoting(text: str) -> Any:
    def respond(headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        status, body = answer(headers)
        body["choices"][0]["message"]["content"] = text
        return status, body

    return respond


@pytest.mark.slow
def test_a_key_quoted_in_the_models_reply_is_stored_masked(tmp_path: Path, results: Path) -> None:
    reply = f"C\n\n(Your key is {OPENAI_KEY}; its end is ...{OPENAI_KEY[-9:]}.)"
    with RawServer(quoting(reply)) as raw:
        agent = f"{{model: openai/served, base_url: '{raw.url}/v1'}}"
        code, out, err = pdbench("run", experiment(tmp_path, agent), "--results", results)
    assert code == 0, out + err
    assert len(raw.bodies) == 2 and no_key_in(*raw.bodies)  # the prompts held no key
    calls = sql_json(results, "select response_text, action from calls order by round")
    assert [c["action"] for c in calls] == ["C", "C"]
    assert calls[0]["response_text"] == "C\n\n(Your key is ***; its end is ...***.)"
    assert no_key_in(out + err, stored_text(results))


def base64_echo(headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    """A 401 that quotes the credentials base64-encoded, as a proxy logging Basic auth might."""
    key = headers["authorization"].removeprefix("Bearer ")
    basic = base64.b64encode(f"user:{key}".encode()).decode()
    bare = base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")
    message = f"denied: Authorization: Basic {basic}; token {bare}"
    return 401, {"error": {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}}


@pytest.mark.slow
def test_a_base64_form_of_a_key_in_an_error_is_masked(tmp_path: Path, results: Path) -> None:
    basic = base64.b64encode(f"user:{OPENAI_KEY}".encode()).decode()
    bare = base64.urlsafe_b64encode(OPENAI_KEY.encode()).decode().rstrip("=")
    # What encodes the key alone: "user:" is 5 bytes, so the key's own characters begin with the third group.
    secret_parts = (basic[8:-4], bare[:-4])
    with RawServer(base64_echo) as raw:
        agent = f"{{model: openai/served, base_url: '{raw.url}/v1'}}"
        code, out, err = pdbench("run", experiment(tmp_path, agent), "--results", results)
    assert code != 0 and raw.headers, out + err
    stored = stored_text(results)
    assert "denied: Authorization: Basic dXNlcjpz***" in stored and "token ***" in stored
    assert not any(part in text for part in secret_parts for text in (stored, out + err))
    assert no_key_in(out + err, stored)


# --- point 6: a key named by a file goes only where the user's own configuration says ----------------------


@pytest.mark.slow
def test_a_key_named_by_the_file_goes_to_the_files_server_only_with_allow_key_to(
    tmp_path: Path, results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with RawServer(answer) as raw:
        host = raw.url.removeprefix("http://")
        agent = f"{{model: openai/served, base_url: '{raw.url}/v1', api_key_env: MY_LAB_KEY}}"
        exp = experiment(tmp_path, agent)
        says = (f"openai/served: the key in MY_LAB_KEY (named by api_key_env) would be sent to {host} ({raw.url}/v1), "
                f"which is neither openai's own endpoint nor the OPENAI_BASE_URL of your environment")  # fmt: skip
        for command in ("validate", "run"):
            code, out, err = pdbench(command, exp, "--results", results) if command == "run" else pdbench(command, exp)
            flat = " ".join(err.split())
            assert code == 2 and says in flat and f"--allow-key-to {host}" in flat, out + err
            assert "Traceback" not in err and no_key_in(out + err)
        assert raw.headers == [] and not (results / "leak.duckdb").exists()

        # Another port of the same host is not that server.
        code, out, err = pdbench("run", exp, "--results", results, "--allow-key-to", "127.0.0.1:9")
        assert code == 2 and raw.headers == [], out + err

        # Allowed on the command line: the key goes there, as the credential only.
        code, out, err = pdbench("validate", exp, "--allow-key-to", host)
        assert code == 0, out + err
        code, out, err = pdbench("run", exp, "--results", results, "--allow-key-to", host)
        assert code == 0, out + err
        assert [h["authorization"] for h in raw.headers] == [f"Bearer {LAB_KEY}"] * 2

    assert no_key_in(*raw.bodies, stored_text(results))

    # Configured in the user's own environment: allowed without the flag.
    monkeypatch.setenv("OPENAI_BASE_URL", f"{raw.url}/v1")
    code, out, err = pdbench("validate", exp)
    assert code == 0, out + err


def test_allow_key_to_names_a_host(tmp_path: Path) -> None:
    code, out, err = pdbench("validate", experiment(tmp_path, "{policy: TFT}"), "--allow-key-to", "http://[::1")
    assert code == 2 and "--allow-key-to takes a host name or address, optionally with :PORT" in err, out + err
