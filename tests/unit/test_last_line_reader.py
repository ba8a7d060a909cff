"""The strict last-line reader (``parse: {reader: last_line}``): Payne & Alloui-Cros (2025)'s rule, on replies
worked by hand from their code (``make_move``: the non-empty stripped lines; fewer than two, or a last line that
upper-cased is not exactly C or D, is unreadable), its setting, and a game through the engine against the
loopback server in which each unreadable reply is a flagged C with no re-ask."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from harness.calls.record import Reader
from harness.config.agents import ModelAgentConfig
from harness.config.presets.duel import duel_config
from harness.config.run_settings import engine_options
from harness.engine.runner import run_experiment
from harness.players.model.labels import ActionLabels
from harness.players.model.parsing.last_line import read_last_line
from harness.players.model.parsing.policy import parse_action
from harness.players.model.player import read_move_last_line
from harness.players.model.prompts.builder import PromptBuilder
from harness.players.model.settings import ParsePolicy, ReplyReader
from harness.store.catalog import Catalog
from tests.support.llm_server import FakeLLMServer, sequence, serve_to_the_cli

CD = ActionLabels()
JF = ActionLabels(cooperate="J", defect="F")


@pytest.mark.parametrize(
    ("text", "labels", "move"),
    [
        ("Reasoning about the match.\nD", CD, "D"),
        ("x\nc", CD, "C"),  # upper-cased: c is C
        ("They cooperated twice.\nI keep trusting them.\nC", CD, "C"),
        ("Reasoning\n  D  \n\n\n   \n", CD, "D"),  # trailing blank lines and spaces are not lines
        ("\n\nReasoning\r\nD\r\n", CD, "D"),  # a stripped line loses its \r, as in their code
        ("Reasoning\n\n\nD", CD, "D"),  # blank lines between do not count
        ("They chose F last round.\nF", JF, "D"),
        ("Trust them.\nj", JF, "C"),
    ],
)
def test_a_reply_with_reasoning_and_the_label_alone_on_its_last_line_is_read(
    text: str, labels: ActionLabels, move: str
) -> None:
    result = read_last_line(text, labels)
    assert (result.action, result.reason, result.method) == (move, None, "last_line")


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ("D", CD),  # one line: no reasoning, so unreadable (the free-text parser reads it)
        ("  D \n\n", CD),  # still one line once blank lines are dropped
        ("", CD),
        ("\n \n", CD),
        ("Reasoning\n**D**", CD),  # bold is not the label alone
        ("Reasoning\nD.", CD),
        ("Reasoning\nMove: D", CD),
        ("Reasoning\nD\nThat is my move.", CD),  # the move is not on the last line
        ("Reasoning\nCD", CD),
        ("Reasoning\nDefect", CD),  # the word, not the label
        ("Reasoning\nD", JF),  # under J/F, D is no label
        ("Reasoning\nFalse", JF),  # a word that begins with F is not F
    ],
)
def test_anything_else_is_unreadable_with_a_reason(text: str, labels: ActionLabels) -> None:
    result = read_last_line(text, labels)
    assert result.action is None and result.method == "last_line"
    assert result.reason and labels.cooperate in result.reason and labels.defect in result.reason


def test_the_two_readers_differ_where_their_rules_do() -> None:
    """The replies the fidelity table names: read by the free-text parser, unreadable (C in [R]) by this one."""
    for text in ("D", "Reasoning\n**D**", "Reasoning\nMove: D", "Reasoning\nD."):
        assert parse_action(text, CD).action == "D"
        assert read_last_line(text, CD).action is None


def test_a_last_line_reading_is_recorded_as_its_own_reader() -> None:
    read = read_move_last_line("Reasoning\nD", CD)
    assert (read.action, read.reader, read.unreadable) == ("D", Reader.LAST_LINE, None)
    refused = read_move_last_line("D", CD)
    assert refused.action is None and refused.unreadable is not None


def test_the_setting_is_an_enum_left_out_of_stored_settings_at_its_default() -> None:
    assert ParsePolicy().reader is ReplyReader.FREE_TEXT
    assert "reader" not in ParsePolicy().model_dump(mode="json")  # stored model settings read as before
    strict = ModelAgentConfig.model_validate({"model": "mock/tft", "parse": {"reader": "last_line"}})
    assert strict.parse.reader is ReplyReader.LAST_LINE
    resolved = strict.resolved()
    assert resolved["parse"]["reader"] == "last_line"
    assert ModelAgentConfig.model_validate(resolved).resolved() == resolved


@pytest.mark.parametrize(
    ("parse", "prompts", "said"),
    [
        ({"reader": "last_lines"}, {}, "'free_text' or 'last_line'"),
        ({"reader": "last_line"}, {"answer_format": "structured"}, "answer_format: structured"),
        ({"reader": "last_line"}, {"answer_format": "label"}, "answer_format: label asks for the label alone"),
        ({"reader": "last_line"}, {"answer_format": "json"}, "answer_format: json asks for a JSON object"),
    ],
)
def test_a_bad_reader_setting_is_refused(parse: dict[str, Any], prompts: dict[str, Any], said: str) -> None:
    with pytest.raises(ValidationError, match=said):
        ModelAgentConfig.model_validate({"model": "mock/tft", "parse": parse, "prompts": prompts})


def test_the_reask_under_the_last_line_reader_asks_for_reasoning_then_the_label() -> None:
    asked = PromptBuilder().reask(read_last_line("D", CD), "CD", ReplyReader.LAST_LINE)
    assert "reasoning" in asked and "last line" in asked and "exactly one letter" not in asked


REPLIES = [
    ("I expect them to defect again.\nD", "D", False),
    ("D", "C", True),  # one line: unreadable, so C, flagged
    ("They always defect.\n**D**", "C", True),
    ("x\nc", "C", False),
    ("Retaliate.\nD\n\n  \n", "D", False),
    ("Final answer: D", "C", True),
]


@pytest.mark.slow
def test_a_game_through_the_engine_plays_each_unreadable_reply_as_a_flagged_c_without_a_reask(
    llm_server: FakeLLMServer, results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_to_the_cli(monkeypatch, llm_server)
    llm_server.configure(responder=sequence([text for text, _, _ in REPLIES]))
    agent = {
        "model": "openai/payne-test",
        "parse": {"reader": "last_line", "max_retries": 0, "on_failure": "cooperate"},
    }
    config = duel_config(agent, {"policy": "ALLD"}, rounds=len(REPLIES), seed=1)
    run_experiment(config, results_dir=results, run_id="ll", engine=engine_options(results))
    with Catalog(results) as cat:
        rounds = cat.records("SELECT round, intended_a::VARCHAR AS move, flagged_a FROM rounds ORDER BY round")
        calls = cat.records(
            "SELECT round, response_text, action, reader, outcome::VARCHAR AS outcome FROM calls "
            "WHERE purpose = 'move' ORDER BY round"
        )
        readers = cat.records("SELECT round, reader FROM move_readers ORDER BY round")
        [parsing] = cat.records("SELECT * FROM model_parsing")
    assert [(r["move"], r["flagged_a"]) for r in rounds] == [(move, flagged) for _, move, flagged in REPLIES]
    assert [c["round"] for c in calls] == list(range(1, len(REPLIES) + 1)), "one call a round: no re-ask"
    assert [c["response_text"] for c in calls] == [text for text, _, _ in REPLIES]
    assert [(c["reader"], c["outcome"]) for c in calls] == [
        (None, "unparseable") if flagged else ("last_line", "ok") for _, _, flagged in REPLIES
    ]
    assert [r["reader"] for r in readers] == ["fallback" if flagged else "last_line" for _, _, flagged in REPLIES]
    assert (parsing["last_line_rounds"], parsing["fallback_rounds"], parsing["parser_rounds"]) == (3, 3, 0)
    assert len(llm_server.requests) == len(REPLIES)
