"""What a user may type where a command takes a run id: the id itself, ``latest`` (the newest run in the results
folder) or any prefix of one id. Every command that names an existing run resolves it here, so ``report``,
``resume`` and the others accept the same words and refuse them with the same errors."""

from __future__ import annotations

from pathlib import Path

from harness.config.run_settings import existing_run_id
from harness.errors import RunNotFoundError, StoreError
from harness.store.catalog import LATEST, not_found

SHOWN_CANDIDATES = 12  # an ambiguous prefix lists at most this many of the runs it could mean


def run_ids_in(results_dir: Path) -> list[str]:
    """The ids of the runs whose files are in ``results_dir`` (a file is named ``<run id>.duckdb``), sorted."""
    if not results_dir.is_dir():
        return []
    return sorted(p.name.removesuffix(".duckdb") for p in results_dir.glob("*.duckdb") if p.is_file())


def resolve_run_id(results_dir: Path, ref: str) -> str:
    """The run id ``ref`` names in ``results_dir``: itself if a run has that id, the newest run for ``latest``,
    else the one run whose id starts with it. An error that lists the candidates when several runs share the
    prefix, and says how to list the runs when none has it. A folder that does not exist is left to the command
    to refuse (it says which folder), so ``ref`` comes back unchanged."""
    existing_run_id(ref)
    if not results_dir.is_dir() or (results_dir / f"{ref}.duckdb").exists():
        return ref
    if ref == LATEST:
        return _newest(results_dir)
    matches = [run_id for run_id in run_ids_in(results_dir) if run_id.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise RunNotFoundError(not_found(ref, results_dir))
    shown = ", ".join(matches[:SHOWN_CANDIDATES])
    more = f" and {len(matches) - SHOWN_CANDIDATES} more" if len(matches) > SHOWN_CANDIDATES else ""
    raise StoreError(
        f"{ref!r} could be any of {len(matches)} runs in {results_dir}: {shown}{more}. Give more of the run id "
        f"(a prefix no other run shares), or the whole id; `pdbench runs --results {results_dir}` lists them."
    )


def _newest(results_dir: Path) -> str:
    """The newest run of the folder as ``pdbench runs`` lists it first (a run being written now, else the latest
    ``created_at``), probe runs left out: a probe run (``pdbench probe``) is about the run it probed and holds no
    games, so after `pdbench probe latest` the next `report latest` or `compare latest` still means the last run
    played; name a probe run by its id."""
    from harness.store.browse import run_entries  # here: it opens every file, which only `latest` needs
    from harness.store.views.probes import PROBE_KIND

    listing = run_entries(results_dir)
    runs = [r for r in listing.runs if r.kind != PROBE_KIND]
    if not runs:
        raise RunNotFoundError(
            f"no runs in {results_dir} yet, so `{LATEST}` names none; create one with `pdbench eval --model "
            "mock/tft` or `pdbench tournament`, or give the folder that holds your runs with --results DIR."
        )
    return runs[0].run_id
