"""``pdbench cache``: what the shared response cache holds, and clearing it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated

import typer

from harness.cli.base import MAX_DAYS, ResultsOpt, app, out
from harness.errors import StoreError
from harness.util.plural import plural

cache_app = typer.Typer(help="The shared response cache.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")


@cache_app.command("stats")
def cache_stats(results: ResultsOpt = None) -> None:
    """Entries, size and models in the response cache.

    Example: `pdbench cache stats`
    """
    from harness.calls.cache.cache import ResponseCache
    from harness.config.run_settings import cache_file, results_dir

    path = cache_file(results_dir(results))
    if not path.exists():
        out.print(f"The response cache {path} is empty (no file yet).")
        return
    with ResponseCache(path) as cache:
        st = cache.stats()
        out_now = cache.batches_out()
    out.print(
        f"{st.path}: {plural(st.entries, 'answer')}, {st.size_bytes / 1e6:,.1f} MB"
        + (f", from {st.oldest:%Y-%m-%d %H:%M} to {st.newest:%Y-%m-%d %H:%M} UTC" if st.oldest else "")
    )
    if out_now:
        out.print(
            f"  {plural(out_now, 'provider batch')} not yet collected (batch mode): `pdbench resume` of the run "
            "that sent them collects their answers"
        )
    for (provider, model), n in sorted(st.by_model.items()):
        out.print(f"  {model_name(provider, model)}: {n:,}")


def model_name(provider: str, model: str) -> str:
    """``provider/model`` as users type it. The cache keeps the model each provider reported: ``gpt-4o-mini-...``
    from OpenAI, but ``mock/tft`` from the mock provider, whose model name already holds its provider (so not
    ``mock/mock/tft``)."""
    return model if model.startswith(f"{provider}/") else f"{provider}/{model}"


@cache_app.command("clear")
def cache_clear(
    results: ResultsOpt = None,
    older_than_days: Annotated[
        float | None, typer.Option(min=0.0, max=MAX_DAYS, help="Only answers older than this.")
    ] = None,
) -> None:
    """Delete cached answers (all, or those older than N days). Runs already recorded keep their calls; provider
    batches not yet collected are kept (they were paid for: `pdbench resume` collects them).

    Example: `pdbench cache clear --older-than-days 30`
    """
    from harness.calls.cache.cache import ResponseCache
    from harness.calls.cache.file import delete_cache
    from harness.config.run_settings import cache_file, results_dir

    path = cache_file(results_dir(results))
    if not path.exists():
        out.print(f"Nothing to clear: {path} does not exist.")
        return
    if older_than_days is None:
        # Delete the rows (another process may have the file open); only a cache too damaged to open
        # is removed as a file.
        try:
            with ResponseCache(path) as cache:
                n = cache.clear()
        except StoreError:
            delete_cache(path)
            out.print(f"The response cache {path} could not be opened; deleted the file.")
            return
        out.print(f"Deleted {plural(n, 'answer')} from the response cache {path}.")
        return
    cutoff = datetime.now(UTC) - timedelta(days=older_than_days)
    with ResponseCache(path) as cache:
        n = cache.clear(older_than=cutoff)
    out.print(f"Deleted {plural(n, 'answer')} older than {plural(older_than_days, 'day')} from {path}.")
