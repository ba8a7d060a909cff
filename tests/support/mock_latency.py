"""The mock model's latency, skipped: for an in-process step that follows a run whose latency only made it last.

A test that signals or kills a real ``pdbench`` process gives the mock a latency so that the run is still playing
when the signal lands; the ``pdbench resume`` that follows, in-process and sent no signal, gets the same answers
without the wait, which would otherwise be most of its time.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

import pytest

from harness.providers import mock


async def _no_wait(seconds: float) -> None:
    """The mock's wait, skipped."""


@contextmanager
def without_mock_latency() -> Iterator[None]:
    """Within the block, the mock provider answers at once whatever its ``latency_ms``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mock, "anyio", SimpleNamespace(sleep=_no_wait))
        yield
