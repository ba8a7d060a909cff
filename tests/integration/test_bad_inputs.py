"""Issue 9, point 11: options and configs that used to crash, or to be read into something they do not say,
each through the command line: a clear one-paragraph error (or the right warning), never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import harness.config
from harness import cli
from tests.support.cli import pdbench

TFT_VS_ALLD = "experiment:\n  conditions:\n    - {agent_a: {policy: TFT}, agent_b: {policy: ALLD}}\n"
LONG = "a" * 300


def refused(*args: object, says: str | list[str]) -> str:
    code, _out, err = pdbench(*args)
    assert code != 0, err
    for text in [says] if isinstance(says, str) else says:
        assert text in " ".join(err.split()), err  # rich wraps long lines; compare with single spaces
    assert "Traceback" not in err
    return err


def config(tmp_path: Path, text: str, name: str = "exp.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -- sizes: every number and the plan have a bound, said in the error ------------------------------------
def test_replicates_beyond_the_bound_are_refused_with_the_bound(tmp_path: Path, results: Path) -> None:
    exp = config(tmp_path, TFT_VS_ALLD)
    refused("run", exp, "--replicates", "99999999999", "--dry-run", "--results", results, says="10000000")
    refused("tournament", "--replicates", "99999999999", "--results", results, says="10000000")
    refused("eval", "--model", "mock/tft", "--replicates", "99999999999", "--results", results, says="10000000")


@pytest.mark.slow
def test_a_plan_too_large_to_play_is_refused_by_validate_and_by_the_dry_run(tmp_path: Path, results: Path) -> None:
    # 300 conditions x 10,000,000 replicates = 3e9 games: validate used to say OK.
    conditions = "".join(
        f"    - {{name: c{i}, agent_a: {{policy: TFT}}, agent_b: {{policy: ALLD}}}}\n" for i in range(300)
    )
    big = config(tmp_path, f"experiment:\n  replicates: 10000000\n  conditions:\n{conditions}", "big.yaml")
    refused("validate", big, says=["3,000,000,000 games", "at most 10,000,000 games and 10,000,000,000 rounds"])
    # Within the replicates bound, but 9e6 games x 2,000 rounds = 1.8e10 rounds: the dry run used to print it.
    long_games = config(tmp_path, "horizon: {n_rounds: 2000}\n" + TFT_VS_ALLD, "long.yaml")
    refused("run", long_games, "--replicates", "9000000", "--dry-run", "--results", results,
            says="about 18,000,000,000 rounds")  # fmt: skip
    refused("run", long_games, "--replicates", "9000000", "--results", results, says="10,000,000,000 rounds")
    assert not list(results.glob("*.duckdb"))  # refused before anything was created
    code, out, err = pdbench("run", long_games, "--replicates", "1000", "--dry-run", "--results", results)
    assert code == 0 and "1000 games" in out, err


@pytest.mark.parametrize("k", ["1e19", "10000000000000000000", "1.0e+19", "1000001"])
def test_collapse_window_has_an_upper_bound(tmp_path: Path, k: str) -> None:
    exp = config(tmp_path, f"metrics: {{collapse: {{k: {k}}}}}\n" + TFT_VS_ALLD)
    refused("validate", exp, says="metrics.collapse.k")


@pytest.mark.parametrize(
    ("option", "value", "bound"),
    [
        ("--rpm", "1e-300", "0.1"),
        ("--rpm", "inf", "1000000"),
        ("--tpm", "1e-300", "100"),
        ("--concurrency", "99999999999", "10000"),
        ("--max-cost", "inf", "1000000"),
        ("--max-cost", "nan", ""),
        ("--rounds", "99999999999", "1000000"),
        ("--max-rounds", "99999999999", "1000000"),
        ("--seed", "99999999999999999999", "9223372036854775807"),
        ("--noise", "nan", ""),
    ],
)
def test_numeric_options_are_bounded(results: Path, option: str, value: str, bound: str) -> None:
    extra = ["--stop-prob", "0.1"] if option == "--max-rounds" else []
    refused("eval", "--model", "mock/tft", option, value, *extra, "--results", results, says=[option, bound])
    assert not list(results.glob("*.duckdb"))


def test_limits_in_a_config_are_bounded_too(tmp_path: Path) -> None:
    exp = config(
        tmp_path,
        "experiment:\n  conditions:\n    - agent_a: {model: mock/tft, limits: {rpm: 1.0e-300, concurrency: 100000}}\n"
        "      agent_b: {policy: TFT}\n",
    )
    refused("validate", exp, says=["limits.rpm", "greater than or equal to 0.1", "limits.concurrency"])


@pytest.mark.parametrize("days", ["inf", "nan", "1e300", "-1"])
def test_cache_clear_older_than_days_is_bounded(results: Path, days: str) -> None:
    cache = results / ".cache"
    cache.mkdir()
    (cache / "responses.sqlite").write_bytes(b"")
    refused("cache", "clear", "--results", results, "--older-than-days", days, says="--older-than-days")


@pytest.mark.parametrize("seed", ["inf", "nan", "1e3", "-1", "7.5", "99999999999999999999", "9" * 5000])
def test_a_mock_seed_must_be_a_whole_number(results: Path, seed: str) -> None:
    refused("eval", "--model", f"mock/tft?seed={seed}", "--results", results, says="must be a whole number from 0")


@pytest.mark.parametrize(
    ("query", "says"),
    [("latency_ms=inf", "latency_ms"), ("p=nan", "between 0 and 1"), ("p=1&p=0", "given twice")],
)
def test_other_mock_options_are_bounded(results: Path, query: str, says: str) -> None:
    refused("tournament", "--players", f"TFT,mock/tft?{query}", "--results", results, says=says)


# -- names too long for a file system ------------------------------------------------------------------
def test_a_300_character_persona_is_refused_with_the_rule(results: Path) -> None:
    refused("eval", "--model", "mock/tft", "--persona", LONG, "--results", results,
            says=["is neither a persona name", "at most 100 characters"])  # fmt: skip


def test_a_300_character_results_folder_or_run_id_is_refused(tmp_path: Path, results: Path) -> None:
    refused("tournament", "--players", "TFT,ALLD", "--rounds", "2", "--results", tmp_path / LONG,
            says=["cannot create the results folder", "File name too long"])  # fmt: skip
    refused("sql", "select 1", "--results", tmp_path / LONG, says="File name too long")
    refused(
        "tournament", "--players", "TFT,ALLD", "--run-id", LONG, "--results", results, says="not usable as a file name"
    )


@pytest.mark.parametrize("command", ["resume", "report"])
def test_a_300_character_or_path_like_run_id_to_read_is_refused(results: Path, command: str) -> None:
    refused(command, LONG, "--results", results, says="is not a run id")
    refused(command, "../x", "--results", results, says="is not a run id")


def test_a_long_config_file_name_still_gives_a_usable_run_id(tmp_path: Path, results: Path) -> None:
    exp = config(tmp_path, TFT_VS_ALLD, name="x" * 230 + " with spaces.yaml")
    code, _out, err = pdbench("run", exp, "--results", results)
    assert code == 0, err
    (made,) = results.glob("*.duckdb")
    assert len(made.name) < 140 and " " not in made.name


# -- silent nonsense, now refused -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("noise: {prob: true}\n", "noise.prob"),
        ("noise: true\n", "noise"),
        ("horizon: {n_rounds: '50'}\n", "horizon.n_rounds"),
        ("horizon: {n_rounds: true}\n", "horizon.n_rounds"),
        ("run: {seed: false}\n", "run.seed"),
        ("metrics: {collapse: {cooperation_threshold: true}}\n", "metrics.collapse.cooperation_threshold"),
    ],
)
def test_booleans_and_quoted_numbers_are_not_numbers(tmp_path: Path, text: str, where: str) -> None:
    # `noise: {prob: true}` used to become a noise of 1.0: every move flipped.
    refused("validate", config(tmp_path, text + TFT_VS_ALLD), says=where)


@pytest.mark.parametrize(
    ("agent", "where"),
    [
        ("{policy: GTFT, generous_prob: true}", "GTFT.generous_prob"),
        ("{policy: RAND, p: '0.5'}", "RAND.p"),
        ("{model: mock/tft, temperature: true}", "temperature"),
        ("{model: mock/tft, max_tokens: 1.0e+2}", "max_tokens"),
        ("{model: mock/tft, prompts: {history_window: true}}", "history_window"),
        ("{model: mock/tft, prompts: {shuffle_options: 1}}", "shuffle_options"),
        ("{model: mock/tft, comprehension: {rounds: [true]}}", "comprehension.rounds"),
        ("{model: mock/tft, parse: {max_retries: true}}", "parse.max_retries"),
        ("{model: mock/tft, limits: {concurrency: true}}", "limits.concurrency"),
    ],
)
def test_no_setting_reads_a_boolean_as_a_number(tmp_path: Path, agent: str, where: str) -> None:
    exp = config(tmp_path, f"experiment:\n  conditions:\n    - {{agent_a: {agent}, agent_b: {{policy: ALLD}}}}\n")
    refused("validate", exp, says=where)


def test_a_duplicate_key_is_refused_with_its_name_and_line(tmp_path: Path) -> None:
    exp = config(tmp_path, "noise: {prob: 0.1}\nhorizon: {n_rounds: 10}\nnoise: {prob: 0.2}\n" + TFT_VS_ALLD)
    refused("validate", exp, says=["the key 'noise' is given twice", "first at line 1", "line 3"])
    agents = tmp_path / "agents.yaml"
    agents.write_text("policy: TFT\npolicy: ALLD\n")
    exp = config(tmp_path, "experiment:\n  conditions:\n    - {agent_a: {ref: agents.yaml}, agent_b: {policy: TFT}}\n")
    refused("validate", exp, says=["agent_a.ref", "the key 'policy' is given twice"])


def test_yaml_anchors_and_merge_keys_still_work(tmp_path: Path) -> None:
    exp = config(
        tmp_path,
        "experiment:\n  conditions:\n    - agent_a: &g {policy: GTFT, generous_prob: 0.2}\n"
        "      agent_b: {<<: *g, generous_prob: 0.3}\n      name: merged\n",
    )
    code, out, err = pdbench("validate", exp)
    assert code == 0 and "OK" in out, err


def test_base_url_for_a_mock_model_is_refused(tmp_path: Path, results: Path) -> None:
    # It used to be ignored without a word: the run was offline although a server was named.
    refused("eval", "--model", "mock/tft", "--base-url", "http://127.0.0.1:9/v1", "--results", results,
            says="base_url is given, but mock/tft is the offline mock model")  # fmt: skip
    exp = config(
        tmp_path,
        "experiment:\n  conditions:\n    - {agent_a: {model: mock/tft, base_url: 'http://127.0.0.1:9/v1'}, "
        "agent_b: {policy: TFT}}\n",
    )
    refused("validate", exp, says="remove base_url")


def test_empty_results_option_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    refused("tournament", "--players", "TFT,ALLD", "--rounds", "2", "--results", "", says="--results is empty")
    refused("sql", "select 1", "--results", " ", says="--results is empty")
    assert not list(tmp_path.glob("*.duckdb"))  # it used to write the run into the current folder
    refused("validate", config(tmp_path, "run: {output: ''}\n" + TFT_VS_ALLD), says="run.output")


@pytest.mark.parametrize("persona", ["/etc/passwd", ".env", "secrets/.env", "notes/.hidden.md", "key.txt"])
def test_a_persona_is_a_markdown_file_and_never_a_dotfile(
    tmp_path: Path, results: Path, monkeypatch: pytest.MonkeyPatch, persona: str
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in (".env", "key.txt", "secrets/.env", "notes/.hidden.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("OPENAI_API_KEY=sk-secret-never-sent\n")
    err = refused("eval", "--model", "mock/tft", "--persona", persona, "--results", results,
                  says=["is neither a persona name", "ending in .md, not a dotfile"])  # fmt: skip
    assert "sk-secret" not in err
    assert not list(results.glob("*.duckdb"))


def test_a_persona_path_to_a_markdown_file_still_works(tmp_path: Path, results: Path) -> None:
    persona = tmp_path / "Stoic Player.MD"
    persona.write_text("You are calm and patient.")
    code, _out, err = pdbench("eval", "--model", "mock/tft", "--persona", persona, "--rounds", "2", "--replicates",
                              "1", "--opponents", "TFT", "--results", results, "--run-id", "p")  # fmt: skip
    assert code == 0, err
    code, out, err = pdbench("sql", "select request_json from calls limit 1", "--results", results, "--format", "csv")
    assert "You are calm and patient." in out, err


def test_a_persona_md_that_is_not_a_regular_file_is_refused(tmp_path: Path, results: Path) -> None:
    (tmp_path / "dir.md").mkdir()
    refused("eval", "--model", "mock/tft", "--persona", tmp_path / "dir.md", "--results", results, says="is a folder")
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)  # reading a pipe without a writer would wait for ever
    refused("eval", "--model", "mock/tft", "--persona", fifo, "--results", results, says="not a regular file")


def test_a_template_named_as_a_dotfile_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-secret {{ labels.cooperate }} {{ labels.defect }}\n")
    exp = config(
        tmp_path,
        f"experiment:\n  conditions:\n    - agent_a: {{model: mock/tft, prompts: {{template_dir: '{tmp_path}', "
        "round_template: .env}}\n      agent_b: {policy: TFT}\n",
    )
    err = refused("validate", exp, says="is a dotfile")
    assert "sk-secret" not in err


# -- the dashboard's results folder ----------------------------------------------------------------------
@pytest.fixture
def no_server(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """`pdbench ui` up to the point where it would become the Streamlit server; records the folder."""
    served: list[Path] = []
    monkeypatch.setattr("harness.ui.launch.serve", lambda folder, port, host: served.append(folder))
    return served


def test_ui_on_a_file_is_refused(tmp_path: Path, no_server: list[Path]) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    refused("ui", "--results", afile, says="is a file, not a folder")
    refused("ui", "--results", afile / "sub", says=["cannot create the results folder", "Not a directory"])
    assert no_server == []


def test_ui_on_a_folder_that_cannot_be_created_is_refused(
    tmp_path: Path, no_server: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", denied)  # as a read-only parent folder answers (root is never refused)
    refused("ui", "--results", tmp_path / "new", says=["cannot create the results folder", "Permission denied"])
    assert no_server == []


def test_ui_on_a_read_only_folder_shows_it_and_warns(
    tmp_path: Path, no_server: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        if os.geteuid() == 0:  # root may write anywhere: make the folder read-only as access() sees it
            real = os.access
            monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == folder else real(p, mode))
        code, _out, err = pdbench("ui", "--results", folder)
    finally:
        folder.chmod(0o755)
    assert code == 0, err
    assert "read-only" in err and "cannot save new ones" in " ".join(err.split())
    assert no_server == [folder.resolve()]


# -- Ctrl-C before a run exists ----------------------------------------------------------------------
def test_ctrl_c_while_loading_the_config_is_one_line_and_130(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(path: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(harness.config, "load_experiment", interrupted)  # `validate` imports it when it runs
    code, _out, err = pdbench("validate", config(tmp_path, TFT_VS_ALLD))
    assert code == 130
    assert err.strip().splitlines() == [cli.INTERRUPTED]


def test_a_ref_whose_path_holds_a_nul_character_is_refused_in_a_paragraph(tmp_path: Path, results: Path) -> None:
    # Found by the config fuzz: a ref of "a\0b.yaml" reached os.open, which raised ValueError (a traceback).
    exp = config(
        tmp_path, 'experiment:\n  conditions:\n    - {agent_a: {ref: "a\\0b.yaml"}, agent_b: {policy: ALLD}}\n'
    )
    refused("validate", exp, says="contains a NUL character")
    refused("run", exp, "--results", results, says="contains a NUL character")
