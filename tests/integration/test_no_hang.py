"""Issue 9, point 11: inputs that used to hang PDBench or exhaust memory, each run as the user runs it, in a
child process held to a time limit and a memory limit (so that a regression fails here instead of hanging
the test suite or the machine); and Ctrl-C while a command starts."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEMORY = 3 << 30  # bytes of address space the child may use; `validate` once used 23 GB on /dev/zero
SECONDS = 60.0  # each case ends in about a second; the limit only catches a hang


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def pdbench(*args: object, cwd: Path = ROOT) -> tuple[int, str, str, float]:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "harness.entry", *map(str, args)],
        capture_output=True, text=True, timeout=SECONDS, preexec_fn=_limit_memory, cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started


def refused_quickly(*args: object, says: list[str], cwd: Path = ROOT) -> str:
    code, _out, err, seconds = pdbench(*args, cwd=cwd)
    flat = " ".join(err.split())
    assert code != 0 and "Traceback" not in err, err
    for text in says:
        assert text in flat, err
    assert seconds < SECONDS / 2, f"took {seconds:.1f} s"
    return err


def agent_config(tmp_path: Path, *agents: str) -> Path:
    """A config with one condition per agent (agent_a; agent_b plays TFT): `validate` reports every
    condition's problem at once, so one child process checks them all."""
    conditions = "".join(
        f"    - agent_a: {agent}\n      agent_b: {{policy: TFT}}\n      name: c{i}\n" for i, agent in enumerate(agents)
    )
    path = tmp_path / "exp.yaml"
    path.write_text(f"experiment:\n  conditions:\n{conditions}")
    return path


@pytest.mark.slow
def test_refs_to_devices_pipes_and_huge_files_are_refused_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")  # opening a pipe without a writer waits for ever
    with (tmp_path / "huge.yaml").open("wb") as f:  # sparse: 20 GB on paper, nothing on disk
        f.truncate(20 << 30)
    refs = ["/dev/zero", "/dev/urandom", "pipe.yaml", "huge.yaml"]
    err = refused_quickly("validate", agent_config(tmp_path, *(f"{{ref: {r}}}" for r in refs)), says=[
        "has 4 problems", "/dev/zero is not a regular file", "/dev/urandom is not a regular file",
        "pipe.yaml is not a regular file", "huge.yaml is larger than 1,000,000 bytes"])  # fmt: skip
    assert err.count("agent_a.ref") == 4


@pytest.mark.slow
def test_a_config_or_price_table_that_is_a_device_or_pipe_is_refused(tmp_path: Path) -> None:
    refused_quickly("validate", "/dev/zero", says=["/dev/zero", "not a regular file"])
    fifo = tmp_path / "exp.yaml"
    os.mkfifo(fifo)
    refused_quickly("validate", fifo, says=["not a regular file"])
    refused_quickly("eval", "--model", "mock/tft", "--max-cost", "1", "--prices", "/dev/zero", "--results",
                    tmp_path / "r", says=["price table", "not a regular file"])  # fmt: skip


@pytest.mark.slow
def test_a_yaml_alias_bomb_is_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    bomb.write_text("\n".join(levels) + "\n")  # 10^9 values once its aliases are expanded
    refused_quickly("validate", bomb, says=["its aliases expand to more than 200,000 values", "line 6"])


@pytest.mark.slow
def test_a_history_window_of_a_billion_is_refused_and_a_million_checks_quickly(tmp_path: Path) -> None:
    refused_quickly("validate", agent_config(tmp_path, "{model: mock/tft, prompts: {history_window: 1000000000}}"),
                    says=["history_window", "less than or equal to 1000000"])  # fmt: skip
    code, out, err, seconds = pdbench(
        "validate", agent_config(tmp_path, "{model: mock/tft, prompts: {history_window: 1000000}}")
    )
    assert code == 0 and "OK" in out and seconds < 20, (err, seconds)


@pytest.mark.slow
def test_a_tiny_request_rate_is_refused(tmp_path: Path) -> None:
    refused_quickly(
        "eval", "--model", "mock/tft", "--rpm", "1e-300", "--results", tmp_path / "r", says=["--rpm", "0.1"]
    )


BOMBS = {  # template: what the error says
    '{{ "x"*2000000000 }}': "would build a value of more than 1,000,000 characters",
    "{% set r = range(100000) %}{% for i in r %}{% for j in r %}{% endfor %}{% endfor %}": "took longer than 2 s",
    '{% set s = "x" * 1000000 %}{% for i in range(100000) %}{{ s }}{% endfor %}': "writes more than 1,000,000",
    '{{ "%2000000000s" % "x" }}': "asks for a format width of 2,000,000,000",
    "{{ range(100)|tojson(indent=1000000) }}": "asks tojson for an indent of 1,000,000",
    "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}": "calls itself too deeply",
    "{{ 10 ** 100000000 }}": "raises an integer to a power of more than 100,000 bits",
}


def template_dir(folder: Path, round_template: str) -> str:
    folder.mkdir()
    (folder / "round.j2").write_text("{{ labels.cooperate }} or {{ labels.defect }}?\n" + round_template + "\n")
    return f"{{model: mock/tft, prompts: {{template_dir: '{folder}'}}}}"


@pytest.mark.slow
def test_templates_that_would_hang_or_exhaust_memory_are_stopped_at_validate(tmp_path: Path) -> None:
    agents = [template_dir(tmp_path / f"t{i}", template) for i, template in enumerate(BOMBS)]
    err = refused_quickly("validate", agent_config(tmp_path, *agents), says=[f"has {len(BOMBS)} problems"])
    lines = [line for line in err.splitlines() if line.strip().startswith("- ")]
    for i, says in enumerate(BOMBS.values()):
        assert any(f"conditions[{i}].agent_a: prompt template 'round.j2' {says}" in line for line in lines), err


@pytest.mark.slow
def test_a_template_that_outgrows_its_limit_mid_run_fails_its_games_not_the_machine(tmp_path: Path) -> None:
    """Round 11 of this template writes over a million characters: check() (at most 9 rounds played) passes,
    the games fail in round 11 with the reason, and the run ends."""
    config = agent_config(
        tmp_path, template_dir(tmp_path / "t", '{% for r in history %}{{ "x" * 100000 }}{% endfor %}')
    )
    code, _out, err, _ = pdbench("run", config, "--results", tmp_path / "r", "--run-id", "big")
    assert code == 0 and "Traceback" not in err, err
    flat = " ".join(err.split())
    assert "1 game failed" in flat and "prompt template 'round.j2' writes more than 1,000,000 characters" in flat


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.0, 0.3, 0.8, 1.5])
def test_ctrl_c_while_starting_is_one_line_and_exit_130(tmp_path: Path, delay: float) -> None:
    """SIGINT at moments from the first import to the run's start. (Before Python runs any PDBench code,
    in its own start-up of some 30 ms, a Ctrl-C is Python's to report; the child says when it is past it, holding
    SIGINT back from then until main() lets it in, so that one sent in the instant between its "ready" and main's
    first line, which no code can guard, is delivered where main handles it.)"""
    script = (
        "import signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}); "
        "from harness.entry import main; print('ready', flush=True); "
        f"sys.argv = ['pdbench', 'eval', '--model', 'mock/tft?latency_ms=20', '--rounds', '20', '--results', "
        f"{str(tmp_path / 'r')!r}]; main()"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=SECONDS)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "interrupted" in err
