"""Named reads that sum up one run for the command line: why games failed, what the calls cost, how the
model seat did over all its games.

The CLI prints these under a run (the announcement, the scorecard); keeping their SQL here means
the CLI asks for a summary by name and never writes a query of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.states import CallOutcome, GameStatus
from harness.store.catalog import Catalog


@dataclass(frozen=True, slots=True)
class FailureCount:
    """How many games of a run failed for one reason (``games.error``)."""

    error: str | None
    games: int


def common_failures(cat: Catalog, run_id: str, limit: int = 3) -> list[FailureCount]:
    """The most common reasons the run's failed games failed, most frequent first (at most ``limit``)."""
    rows = cat.records(
        "SELECT error, count(*) AS n FROM games WHERE run_id = ? AND status = ? GROUP BY error ORDER BY n DESC LIMIT ?",
        [run_id, GameStatus.FAILED, limit],
    )
    return [FailureCount(r["error"], r["n"]) for r in rows]


def call_totals(cat: Catalog, run_id: str) -> dict[str, Any]:
    """Every model call the run made, including the attempts of games that were played again on resume
    (``superseded_calls``): they were made and paid for. Keys: ``calls``, ``cached``, ``cost``,
    ``input_tokens``, ``output_tokens``, ``unparseable`` (sums are None when the run made no call)."""
    columns = "cached, cost_usd, input_tokens, output_tokens, outcome"
    return cat.records(
        "SELECT count(*) AS calls, count(*) FILTER (WHERE cached) AS cached, sum(cost_usd) AS cost, "
        "sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, "
        "count(*) FILTER (WHERE outcome = ?) AS unparseable "
        f"FROM (SELECT {columns} FROM calls WHERE run_id = ? "
        f"UNION ALL SELECT {columns} FROM superseded_calls WHERE run_id = ?)",
        [CallOutcome.UNPARSEABLE, run_id, run_id],
    )[0]


def seat_a_overall(cat: Catalog, run_id: str) -> dict[str, Any]:
    """Player A's means over the run's complete games (in an eval, the model's): ``payoff`` per round,
    ``coop`` (cooperation rate of its chosen moves) and ``games``; the means are None without a complete
    game."""
    return cat.records(
        "SELECT avg(payoff_per_round) AS payoff, avg(cooperation_rate) AS coop, count(*) AS games "
        "FROM player_metrics WHERE run_id = ? AND player = 'a' AND status = ?",
        [run_id, GameStatus.COMPLETE],
    )[0]


def prompt_cache_totals(cat: Catalog, run_id: str) -> list[dict[str, Any]]:
    """Per model (``provider``, ``model``), the tokens of the run's paid calls (response-cache hits left out:
    nothing was sent) and, of their input, those the provider read from its prompt cache and wrote to it:
    ``input_tokens``, ``output_tokens``, ``cached_input_tokens``, ``cache_write_tokens``, and the tier they were
    bought at (``service_tier``; one of them, should a model's seats differ). Only models of which
    some call reported the provider's cache (none in a run of mock models or in a file from before schema 7),
    calls of games a resume replayed included."""
    columns = (
        "provider, model, service_tier, cached, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens"
    )
    return cat.records(
        "SELECT provider, model, any_value(service_tier) AS service_tier, sum(input_tokens) AS input_tokens, "
        "sum(output_tokens) AS output_tokens, "
        "coalesce(sum(cached_input_tokens), 0) AS cached_input_tokens, "
        "coalesce(sum(cache_write_tokens), 0) AS cache_write_tokens "
        f"FROM (SELECT {columns} FROM calls WHERE run_id = ? "
        f"UNION ALL SELECT {columns} FROM superseded_calls WHERE run_id = ?) WHERE NOT cached "
        "GROUP BY provider, model HAVING count(cached_input_tokens) + count(cache_write_tokens) > 0 "
        "ORDER BY provider, model",
        [run_id, run_id],
    )
