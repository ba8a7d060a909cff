"""The loopback server's batch APIs (:mod:`tests.support.batch_api`), driven only through the official SDKs.

Why through the SDKs: the harness's batch mode is tested against this server, so it must speak the paths, fields and
shapes that ``AsyncOpenAI`` (files, batches) and ``AsyncAnthropic`` (Message Batches) send and parse. Each batch
item's answer is compared with the synchronous endpoint's answer to the same body, asked of the same server.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import openai
import pytest

from tests.support.llm_server import FakeLLMProcess, FakeLLMServer, constrained, reply_schema

KEY = "sk-test-batch-4242"
MESSAGES = [{"role": "user", "content": "Round 1: C or D?"}]


def echo(provider: str, request: dict[str, Any]) -> str:
    """A different answer for every prompt (so a mixed-up result shows), constrained JSON where a schema is asked."""
    if reply_schema(provider, request) is not None:
        return constrained(1)(provider, request)
    return f"You said: {request['messages'][-1]['content']}"


def chat_body(i: int, model: str = "gpt-test") -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": f"Round {i}: C or D?"}], "max_tokens": 20}


def jsonl(lines: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def openai_file(bodies: list[dict[str, Any]], ids: list[str] | None = None) -> bytes:
    ids = ids or [f"game-{i}" for i in range(len(bodies))]
    return jsonl([{"custom_id": c, "method": "POST", "url": "/v1/chat/completions", "body": b}
                  for c, b in zip(ids, bodies, strict=True)])  # fmt: skip


@pytest.fixture
async def oai(llm_server: FakeLLMServer) -> AsyncIterator[openai.AsyncOpenAI]:
    llm_server.configure(responder=echo)
    client = openai.AsyncOpenAI(base_url=llm_server.openai_base_url, api_key=KEY, max_retries=0)
    yield client
    await client.close()


@pytest.fixture
async def claude(llm_server: FakeLLMServer) -> AsyncIterator[anthropic.AsyncAnthropic]:
    llm_server.configure(responder=echo)
    client = anthropic.AsyncAnthropic(base_url=llm_server.anthropic_base_url, api_key=KEY, max_retries=0)
    yield client
    await client.close()


async def submit(oai: openai.AsyncOpenAI, data: bytes, **options: Any) -> Any:
    uploaded = await oai.files.create(file=("round.jsonl", data), purpose="batch")
    return await oai.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h", **options
    )


async def lines(oai: openai.AsyncOpenAI, file_id: str | None) -> list[dict[str, Any]]:
    if file_id is None:
        return []
    content = await oai.files.content(file_id)
    return [json.loads(line) for line in content.text.splitlines()]


async def test_an_openai_batch_goes_from_upload_to_results_with_the_synchronous_answers(
    llm_server: FakeLLMServer, oai: openai.AsyncOpenAI
) -> None:
    bodies = [chat_body(i) for i in range(3)]
    uploaded = await oai.files.create(file=("round.jsonl", openai_file(bodies)), purpose="batch")
    assert (uploaded.object, uploaded.purpose, uploaded.status) == ("file", "batch", "processed")
    assert uploaded.bytes == len(openai_file(bodies))
    assert (await oai.files.content(uploaded.id)).content == openai_file(bodies)
    assert (await oai.files.retrieve(uploaded.id)).filename == "round.jsonl"

    batch = await oai.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                     completion_window="24h", metadata={"run": "r1", "round": "1"})  # fmt: skip
    assert batch.id.startswith("batch_") and batch.output_file_id is None
    assert batch.metadata == {"run": "r1", "round": "1"}
    seen: list[str] = [batch.status]
    while batch.status != "completed":
        batch = await oai.batches.retrieve(batch.id)
        seen.append(batch.status)
    assert seen == ["validating", "in_progress", "finalizing", "completed"]
    assert batch.request_counts is not None
    assert (batch.request_counts.total, batch.request_counts.completed, batch.request_counts.failed) == (3, 3, 0)
    assert batch.error_file_id is None and batch.model == "gpt-test"
    assert batch.completed_at is not None and batch.in_progress_at is not None

    output = await lines(oai, batch.output_file_id)
    assert [line["custom_id"] for line in output] != ["game-0", "game-1", "game-2"]  # shuffled: match by custom_id
    assert sorted(line["custom_id"] for line in output) == ["game-0", "game-1", "game-2"]
    assert await lines(oai, batch.output_file_id) == output  # the same order on every download
    by_id = {line["custom_id"]: line for line in output}
    for i, body in enumerate(bodies):
        line = by_id[f"game-{i}"]
        assert line["error"] is None and line["response"]["status_code"] == 200
        answer = openai.types.chat.ChatCompletion.model_validate(line["response"]["body"])
        sync = await oai.chat.completions.create(**body)
        assert answer.choices[0].message.content == sync.choices[0].message.content == f"You said: Round {i}: C or D?"
        assert answer.usage == sync.usage
    stats = llm_server.batch_stats("openai")
    assert (stats.batches, stats.items_answered, stats.files_uploaded, stats.retrieves) == (1, 3, 1, 3)
    paths = [r.path for r in llm_server.requests if r.path != "/v1/chat/completions"]
    assert paths[:2] == ["/v1/files", f"/v1/files/{uploaded.id}/content"] and paths.count("/v1/batches") == 1
    assert all(r.has_auth and r.status == 200 for r in llm_server.requests)
    assert [(b.provider, b.status, b.items) for b in llm_server.batches] == [("openai", "completed", 3)]


async def test_an_anthropic_batch_goes_from_create_to_results_with_the_synchronous_answers(
    llm_server: FakeLLMServer, claude: anthropic.AsyncAnthropic
) -> None:
    tool = {"name": "move", "input_schema": {"type": "object", "properties": {"action": {"enum": ["C", "D"]}}}}
    params: list[Any] = [
        {"model": "claude-test", "max_tokens": 20, "messages": [{"role": "user", "content": "Round 1: C or D?"}]},
        {"model": "claude-test", "max_tokens": 20, "messages": [{"role": "user", "content": "Round 2: C or D?"}],
         "system": "You are a careful player."},
        {"model": "claude-test", "max_tokens": 20, "messages": [{"role": "user", "content": "Round 3: pick"}],
         "tools": [tool], "tool_choice": {"type": "tool", "name": "move"}},
    ]  # fmt: skip
    batch = await claude.messages.batches.create(
        requests=[{"custom_id": f"g{i}_seat-a", "params": p} for i, p in enumerate(params)]
    )
    assert batch.id.startswith("msgbatch_") and batch.processing_status == "in_progress"
    assert batch.request_counts.processing == 3 and batch.results_url is None and batch.ended_at is None
    seen = []
    while batch.processing_status != "ended":
        batch = await claude.messages.batches.retrieve(batch.id)
        seen.append(batch.processing_status)
    assert seen == ["in_progress", "in_progress", "ended"]
    assert batch.ended_at is not None and batch.results_url is not None
    counts = batch.request_counts
    assert (counts.processing, counts.succeeded, counts.errored, counts.canceled, counts.expired) == (0, 3, 0, 0, 0)

    results = [r async for r in await claude.messages.batches.results(batch.id)]
    assert [r.custom_id for r in results] != ["g0_seat-a", "g1_seat-a", "g2_seat-a"]
    by_id = {r.custom_id: r.result for r in results}
    for i, p in enumerate(params):
        result = by_id[f"g{i}_seat-a"]
        assert result.type == "succeeded"
        sync = await claude.messages.create(**p)
        assert [block.model_dump(exclude={"id"}) for block in result.message.content] == [
            block.model_dump(exclude={"id"}) for block in sync.content
        ]  # the same blocks (a tool call's id is per request)
        assert result.message.stop_reason == sync.stop_reason
        assert result.message.usage == sync.usage
    assert by_id["g2_seat-a"].message.content[0].input == {"action": "D"}  # type: ignore[union-attr]
    stats = llm_server.batch_stats("anthropic")
    assert (stats.batches, stats.items_answered, stats.files_uploaded, stats.retrieves) == (1, 3, 0, 4)
    assert llm_server.batch_stats("openai").batches == 0


async def test_batch_items_count_prompt_caching_as_the_synchronous_endpoint_does(
    llm_server: FakeLLMServer, oai: openai.AsyncOpenAI
) -> None:
    llm_server.configure(prompt_cache=True, openai_cache_min=128, openai_cache_step=128, batch_polls=0)
    rules = "The rules of the game, the same every round. " * 30
    system = {"role": "system", "content": rules}
    bodies: list[Any] = [{"model": "gpt-test", "messages": [system, {"role": "user", "content": f"Round {i}"}]}
                         for i in range(3)]  # fmt: skip
    batch = await submit(oai, openai_file(bodies))
    usage = {line["custom_id"]: line["response"]["body"]["usage"] for line in await lines(oai, batch.output_file_id)}
    llm_server.reset()  # a cold cache again, for the same prompts asked one by one in the same order
    for i, body in enumerate(bodies):
        sync = await oai.chat.completions.create(**body)
        assert sync.usage is not None and usage[f"game-{i}"] == sync.usage.model_dump(exclude_none=True)
    assert [usage[f"game-{i}"]["prompt_tokens_details"]["cached_tokens"] > 0 for i in range(3)] == [False, True, True]


async def test_scripted_item_errors_and_expiries_land_in_each_providers_result_shape(
    llm_server: FakeLLMServer, oai: openai.AsyncOpenAI, claude: anthropic.AsyncAnthropic
) -> None:
    llm_server.configure(batch_polls=0)
    llm_server.fail_batch_items("openai", {0: "error", 2: "expired"})
    llm_server.fail_batch_items("anthropic", {0: "error", 2: "expired"})
    refused = {"model": "gpt-test", "messages": []}  # the endpoint answers it 400
    batch = await submit(oai, openai_file([*(chat_body(i) for i in range(3)), refused]))
    assert batch.status == "completed" and batch.request_counts is not None
    assert (batch.request_counts.completed, batch.request_counts.failed) == (1, 3)
    assert [line["custom_id"] for line in await lines(oai, batch.output_file_id)] == ["game-1"]
    errors = {line["custom_id"]: line for line in await lines(oai, batch.error_file_id)}
    assert errors["game-0"]["error"] is None and errors["game-0"]["response"]["status_code"] == 500
    assert errors["game-0"]["response"]["body"]["error"]["type"] == "server_error"
    assert errors["game-2"]["response"] is None and errors["game-2"]["error"]["code"] == "batch_expired"
    assert errors["game-3"]["response"]["status_code"] == 400
    assert errors["game-3"]["response"]["body"]["error"]["type"] == "invalid_request_error"

    requests: Any = [{"custom_id": f"r{i}", "params": chat_body(i, "claude-test")} for i in range(3)]
    requests.append({"custom_id": "r3", "params": {"model": "claude-test", "messages": MESSAGES}})  # no max_tokens
    ended = await claude.messages.batches.create(requests=requests)
    assert ended.processing_status == "ended"
    counts = ended.request_counts
    assert (counts.succeeded, counts.errored, counts.expired) == (1, 2, 1)
    by_id = {r.custom_id: r.result async for r in await claude.messages.batches.results(ended.id)}
    assert by_id["r0"].type == "errored" and by_id["r0"].error.error.type == "api_error"
    assert by_id["r1"].type == "succeeded" and by_id["r2"].type == "expired"
    assert by_id["r3"].type == "errored" and by_id["r3"].error.error.type == "invalid_request_error"
    assert llm_server.batch_stats("openai").items_answered == llm_server.batch_stats("anthropic").items_answered == 1


async def test_an_expired_batch_answers_its_first_half_and_a_failed_one_nothing(
    llm_server: FakeLLMServer, oai: openai.AsyncOpenAI, claude: anthropic.AsyncAnthropic
) -> None:
    llm_server.configure(batch_polls=1)
    llm_server.next_batch_outcome("openai", "expired")
    batch = await submit(oai, openai_file([chat_body(i) for i in range(4)]))
    batch = await oai.batches.retrieve(batch.id)
    assert batch.status == "in_progress"
    batch = await oai.batches.retrieve(batch.id)
    assert batch.status == "expired" and batch.expired_at is not None
    assert sorted(line["custom_id"] for line in await lines(oai, batch.output_file_id)) == ["game-0", "game-1"]
    expired = await lines(oai, batch.error_file_id)
    assert sorted(line["custom_id"] for line in expired) == ["game-2", "game-3"]
    assert {line["error"]["code"] for line in expired} == {"batch_expired"}

    llm_server.next_batch_outcome("openai", "failed")
    failed = await submit(oai, openai_file([chat_body(0)]))
    failed = await oai.batches.retrieve(failed.id)
    assert failed.status == "failed" and failed.output_file_id is None and failed.error_file_id is None
    assert failed.errors is not None and [e.code for e in failed.errors.data or []] == ["token_limit_exceeded"]

    llm_server.next_batch_outcome("anthropic", "expired")
    requests: Any = [{"custom_id": f"r{i}", "params": chat_body(i, "claude-test")} for i in range(4)]
    ended = await claude.messages.batches.create(requests=requests)
    ended = await claude.messages.batches.retrieve(ended.id)
    ended = await claude.messages.batches.retrieve(ended.id)
    assert ended.processing_status == "ended"
    assert (ended.request_counts.succeeded, ended.request_counts.expired) == (2, 2)
    by_id = {r.custom_id: r.result.type async for r in await claude.messages.batches.results(ended.id)}
    assert by_id == {"r0": "succeeded", "r1": "succeeded", "r2": "expired", "r3": "expired"}

    llm_server.next_batch_outcome("anthropic", "failed")
    with pytest.raises(anthropic.BadRequestError):
        await claude.messages.batches.create(requests=requests)
    assert (await claude.messages.batches.create(requests=requests)).processing_status == "in_progress"  # consumed
    assert llm_server.batch_stats("anthropic").batches == 2


async def test_a_bad_input_file_fails_the_batch_with_its_lines_and_a_bad_request_is_refused(
    llm_server: FakeLLMServer, oai: openai.AsyncOpenAI, claude: anthropic.AsyncAnthropic
) -> None:
    good = {"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": chat_body(0)}
    data = jsonl([good, {**good, "body": chat_body(1)}, {**good, "custom_id": "b", "url": "/v1/embeddings"},
                  {**good, "custom_id": "c", "method": "GET"}]) + b"{not json\n"  # fmt: skip
    batch = await submit(oai, data)
    batch = await oai.batches.retrieve(batch.id)
    assert batch.status == "failed" and batch.errors is not None
    found = [(e.code, e.line) for e in batch.errors.data or []]
    assert found == [("duplicate_custom_id", 2), ("mismatched_endpoint", 3), ("invalid_method", 4),
                     ("invalid_json_line", 5)]  # fmt: skip
    mixed = await submit(oai, openai_file([chat_body(0), chat_body(1, "gpt-other")]))
    mixed = await oai.batches.retrieve(mixed.id)
    assert [(e.code, e.line) for e in mixed.errors.data or []] == [("mismatched_model", 2)]  # type: ignore[union-attr]
    with pytest.raises(openai.BadRequestError, match="input_file_id"):
        await oai.batches.create(input_file_id="file-nope", endpoint="/v1/chat/completions", completion_window="24h")
    with pytest.raises(openai.NotFoundError):
        await oai.batches.retrieve("batch_nope")

    params: Any = chat_body(0, "claude-test")
    for custom_ids in (["has space"], ["x" * 65], ["same", "same"]):
        with pytest.raises(anthropic.BadRequestError, match="custom_id"):
            await claude.messages.batches.create(requests=[{"custom_id": c, "params": params} for c in custom_ids])
    assert llm_server.batch_stats("anthropic").batches == 0
    assert llm_server.count(provider="anthropic", status=400) == 3


async def test_batches_are_listed_newest_first_and_cancelled_keeping_the_items_answered(
    llm_server: FakeLLMServer, oai: openai.AsyncOpenAI, claude: anthropic.AsyncAnthropic
) -> None:
    created = [(await submit(oai, openai_file([chat_body(i) for i in range(3)]), metadata={"round": str(r)})).id
               for r in range(3)]  # fmt: skip
    page = await oai.batches.list(limit=2)
    assert [b.id for b in page.data] == created[:0:-1] and page.has_more
    assert [b.id async for b in oai.batches.list(limit=2)] == created[::-1]  # the SDK pages on with `after`
    fresh = openai.AsyncOpenAI(base_url=llm_server.openai_base_url, api_key=KEY, max_retries=0)  # a restarted client
    found = [b.id async for b in fresh.batches.list() if (b.metadata or {}).get("round") == "1"]
    await fresh.close()
    assert found == [created[1]]
    assert {b.status for b in llm_server.batches} == {"validating"}  # listing does not advance them

    batch = await oai.batches.retrieve(created[0])  # in progress, a third of the items answered (1 of 3)
    batch = await oai.batches.cancel(batch.id)
    assert batch.status == "cancelling" and batch.cancelling_at is not None
    batch = await oai.batches.retrieve(batch.id)
    assert batch.status == "cancelled" and batch.request_counts is not None
    assert (batch.request_counts.completed, batch.request_counts.failed) == (1, 2)
    assert [line["custom_id"] for line in await lines(oai, batch.output_file_id)] == ["game-0"]
    assert {line["error"]["code"] for line in await lines(oai, batch.error_file_id)} == {"batch_cancelled"}
    with pytest.raises(openai.BadRequestError):
        await oai.batches.cancel(batch.id)

    requests: Any = [{"custom_id": f"r{i}", "params": chat_body(i, "claude-test")} for i in range(3)]
    mine = [(await claude.messages.batches.create(requests=requests)).id for _ in range(3)]
    assert [b.id async for b in claude.messages.batches.list(limit=2)] == mine[::-1]
    await claude.messages.batches.retrieve(mine[1])
    canceling = await claude.messages.batches.cancel(mine[1])
    assert canceling.processing_status == "canceling" and canceling.cancel_initiated_at is not None
    ended = await claude.messages.batches.retrieve(mine[1])
    assert ended.processing_status == "ended"
    assert (ended.request_counts.succeeded, ended.request_counts.canceled) == (1, 2)
    types = [r.result.type async for r in await claude.messages.batches.results(mine[1])]
    assert sorted(types) == ["canceled", "canceled", "succeeded"]
    assert (await claude.messages.batches.delete(mine[1])).type == "message_batch_deleted"
    assert [b.id async for b in claude.messages.batches.list()] == [mine[2], mine[0]]


async def test_batch_requests_are_never_rate_limited_and_need_a_key(
    llm_server: FakeLLMServer, oai: openai.AsyncOpenAI
) -> None:
    llm_server.configure(rpm_limit=1)
    batch = await submit(oai, openai_file([chat_body(0)]))
    for _ in range(3):
        batch = await oai.batches.retrieve(batch.id)
    assert batch.status == "completed"
    await oai.chat.completions.create(**chat_body(0))  # the window's one request
    with pytest.raises(openai.RateLimitError):
        await oai.chat.completions.create(**chat_body(0))
    with pytest.raises(openai.AuthenticationError):
        await oai.batches.list(extra_headers={"Authorization": ""})  # no key sent
    [refused] = [r for r in llm_server.requests if r.status == 401]
    assert (refused.path, refused.fault, refused.has_auth) == ("/v1/batches", "auth", False)


@pytest.mark.slow
async def test_the_server_process_scripts_and_counts_batches_over_its_control_api() -> None:
    with FakeLLMProcess(batch_polls=0) as proc:
        proc.fail_batch_items("openai", {1: "expired"})
        client = openai.AsyncOpenAI(base_url=proc.openai_base_url, api_key=KEY, max_retries=0)
        batch = await submit(client, openai_file([chat_body(i) for i in range(2)]))
        assert batch.status == "completed"
        assert [line["custom_id"] for line in await lines(client, batch.error_file_id)] == ["game-1"]
        await client.close()
        proc.next_batch_outcome("anthropic", "failed")
        claude = anthropic.AsyncAnthropic(base_url=proc.anthropic_base_url, api_key=KEY, max_retries=0)
        params: Any = chat_body(0, "claude-test")
        with pytest.raises(anthropic.BadRequestError):
            await claude.messages.batches.create(requests=[{"custom_id": "a", "params": params}])
        await claude.close()
        assert [(b.provider, b.status, b.items) for b in proc.batches] == [("openai", "completed", 2)]
        stats = proc.batch_stats("openai")
        assert (stats.batches, stats.items_answered, stats.files_uploaded) == (1, 1, 1)
        proc.reset()
        assert proc.batches == [] and proc.batch_stats("openai").batches == 0
