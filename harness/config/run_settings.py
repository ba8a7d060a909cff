"""Settings a run takes from its surroundings: the results folder, where the response cache lives, retry bounds.

Shared by the CLI and the dashboard, so a run started from either behaves the same.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from harness.errors import ConfigError, StoreError

if TYPE_CHECKING:  # imported where used: the commands that only read results never load the engine
    from harness.calls.batch import BatchSettings
    from harness.calls.path import RetrySettings
    from harness.config import ExperimentConfig
    from harness.config.engine_options import EngineOptions

# Each variable, and the RetrySettings field it sets.
RETRY_FIELDS = {
    "MAX_ATTEMPTS": "max_attempts",
    "RETRY_SECONDS": "max_seconds",
    "TIMEOUT": "timeout",
    "BACKOFF": "backoff_initial",
}
_RANGE_ERRORS = {"greater_than_equal", "less_than_equal", "finite_number"}


def cache_file(results: Path) -> Path:
    """The shared response cache: $PDBENCH_CACHE, or <results>/.cache/responses.sqlite."""
    from harness.config import environment

    return Path(environment.PathSettings().CACHE or results / ".cache" / "responses.sqlite")


def cache_path(results: Path, no_cache: bool) -> Path | None:
    """The cache a run uses: none with ``--no-cache``, else :func:`cache_file`."""
    return None if no_cache else cache_file(results)


def engine_options(
    results: Path, *, no_cache: bool = False, max_cost: float | None = None, prices: Path | None = None
) -> EngineOptions:
    """How a run started from the CLI or the dashboard makes its model calls."""
    from harness.calls.pricing import DEFAULT_PRICES
    from harness.config.engine_options import EngineOptions

    return EngineOptions(
        cache_path=cache_path(results, no_cache),
        prices=(prices, DEFAULT_PRICES) if prices else (DEFAULT_PRICES,),
        max_cost=max_cost,
        retry=retry_settings(),
        batch=batch_settings(),
    )


def batch_settings() -> BatchSettings:
    """When batches are submitted and polled: PDBENCH_BATCH_GATHER and PDBENCH_BATCH_POLL (seconds), else the
    defaults (see :class:`~harness.calls.batch.BatchSettings`)."""
    from harness.calls.batch import POLL_MAX_S, BatchSettings
    from harness.config import environment

    try:
        given = environment.BatchEnvironment()
    except ValidationError as exc:
        error = exc.errors()[0]
        var = str(error["loc"][0]) if error["loc"] else "BATCH_GATHER"
        raise ConfigError(
            f"PDBENCH_{var}={error.get('input')!r} in the environment is not usable: give a number of seconds "
            "(BATCH_GATHER from 0 to 600, BATCH_POLL from 0 to 3,600)"
        ) from None
    defaults = BatchSettings()
    poll = defaults.poll_first_s if given.BATCH_POLL is None else given.BATCH_POLL
    return BatchSettings(
        gather_s=defaults.gather_s if given.BATCH_GATHER is None else given.BATCH_GATHER,
        poll_first_s=poll,
        poll_max_s=max(POLL_MAX_S, poll),
    )


def retry_settings() -> RetrySettings:
    """Retry bounds from PDBENCH_MAX_ATTEMPTS, PDBENCH_RETRY_SECONDS, PDBENCH_TIMEOUT, PDBENCH_BACKOFF."""
    from harness.calls.path import RetrySettings
    from harness.config import environment

    names = ", ".join(f"PDBENCH_{var}" for var in RETRY_FIELDS)
    try:
        given = environment.RetryEnvironment().model_dump(exclude_none=True)
        return RetrySettings.model_validate({RETRY_FIELDS[var]: value for var, value in given.items()})
    except ValidationError as exc:
        error = exc.errors()[0]
        var = str(error["loc"][0]) if error["loc"] else ""
        if error["type"] in _RANGE_ERRORS and var in environment.MAX_SECONDS:
            raise ConfigError(
                f"PDBENCH_{var}={error['input']} in the environment is out of range: give a number of seconds "
                f"from 0 to {environment.MAX_SECONDS[var]:,.0f}"
            ) from None
        raise ConfigError(f"invalid retry settings in the environment: {error['msg']} ({names})") from None


def results_dir(option: str | None, config: ExperimentConfig | None = None) -> Path:
    """The results folder: --results, else the config's run.output, else $PDBENCH_RESULTS, else results/;
    checked to be usable as a folder (it is created when a run is written)."""
    if option is not None:
        if not option.strip():
            raise ConfigError(
                "--results is empty: give the results folder (e.g. --results results), or leave the option "
                "out to use $PDBENCH_RESULTS or results/"
            )
        return _usable_folder(Path(option), "--results")
    if config is not None and config.run.output:
        return _usable_folder(Path(config.run.output), "run.output")
    from harness.config import environment

    return _usable_folder(Path(environment.PathSettings().RESULTS or "results"), "the results folder")


def _usable_folder(folder: Path, source: str) -> Path:
    shown = str(folder) if len(str(folder)) <= 100 else str(folder)[:97] + "..."
    try:
        mode = folder.stat().st_mode
    except FileNotFoundError:
        return folder  # created when a run is written
    except OSError as exc:  # a name too long, a file where a folder should be, no permission
        raise StoreError(
            f"cannot create the results folder {shown} ({source}): {exc.strerror or exc}. "
            "Choose another with --results DIR."
        ) from None
    if not stat.S_ISDIR(mode):
        raise StoreError(f"{shown} ({source}) is a file, not a folder: give the results folder with --results DIR.")
    return folder


def existing_run_id(run_id: str) -> str:
    """A run id given to name an existing run: it names a file, so it cannot be longer than a file name may be
    or hold a path separator. (Not the full pattern of new run ids: older runs may have other characters.)"""
    if not run_id or len(run_id) > 128 or "/" in run_id or os.sep in run_id or "\0" in run_id:
        shown = run_id if len(run_id) <= 60 else run_id[:57] + "..."
        raise ConfigError(
            f"{shown!r} is not a run id: a run id names its results file (<run id>.duckdb), has at most 128 "
            "characters and no '/'. List the runs with `pdbench sql \"select run_id, status from runs\"`."
        )
    return run_id


def run_id_prefix(stem: str) -> str:
    """A config file's name as the start of a run id (which names a file): other characters become '_'."""
    prefix = re.sub(r"[^A-Za-z0-9_.-]", "_", stem)[:100].lstrip("_.-")
    return prefix or "run"
