"""The one hierarchy of errors PDBench raises for things a user can fix.

Every error carries a message written for the person at the terminal: what is
wrong, where, and what to do next. The CLI prints it as one paragraph and exits
non-zero; anything that is not a ``PDBenchError`` is a bug and keeps its traceback.
"""

from __future__ import annotations


class PDBenchError(Exception):
    """Base class of user-facing errors. ``exit_code`` is what the CLI returns."""

    exit_code: int = 2


class ConfigError(PDBenchError):
    """A configuration file or option is invalid. ``problems`` lists every problem found."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []

    def __str__(self) -> str:
        head = super().__str__()
        if not self.problems:
            return head
        return head + "\n" + "\n".join(f"  - {p}" for p in self.problems)


class UnknownStrategyError(ConfigError):
    """A strategy name that is not in the registry."""


class StoreError(PDBenchError):
    """The results folder or a results database cannot be used as asked."""


class RunExistsError(StoreError):
    """A run with this id already has a results file and overwriting was not asked for."""


class DiskFull(StoreError):
    """The disk holding the results or the cache is full: the run stops as interrupted, to be resumed
    once there is space."""


class CacheLost(StoreError):
    """The response cache file vanished, was replaced or is corrupt while in use; the call path moves
    on to a fresh cache (answers recorded in the run file are kept). ``vanished``: deleted or replaced,
    rather than corrupt in place."""

    def __init__(self, message: str, *, vanished: bool = False) -> None:
        super().__init__(message)
        self.vanished = vanished


class RunNotFoundError(StoreError):
    """No results file holds the run the user named."""


class QueryError(PDBenchError):
    """A user's SQL failed."""


class QueryTimeout(QueryError):
    """A query ran past its time limit and was stopped (``pdbench sql --timeout``)."""


class QueryInterrupted(PDBenchError):
    """A query was stopped by Ctrl-C: nothing to fix, so the CLI prints one line and exits 130."""

    exit_code = 130
