"""The serial run (`pytest -m serial`) skips, unread, the modules that never name the serial mark
(tests/conftest.py, ``pytest_ignore_collect``): none of those may hold a serial test, or the serial run would
silently leave it out. Checked against this session's own collection, before ``-m`` deselected anything: in the
README's parallel run that is every test module, at no extra cost."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SERIAL_MODULES, _may_hold_serial_tests

TESTS = Path(__file__).resolve().parents[1]


def test_every_module_holding_a_serial_test_is_collected_by_the_serial_run(request: pytest.FixtureRequest) -> None:
    serial_modules = request.config.stash[SERIAL_MODULES]
    skipped = sorted(str(path) for path in serial_modules if not _may_hold_serial_tests(path))
    assert skipped == [], f"modules holding serial tests that `pytest -m serial` would skip: {skipped}"
    for folder in {path.parent for path in serial_modules}:  # nor any folder above them
        while folder != TESTS.parent:
            assert _may_hold_serial_tests(folder), folder
            folder = folder.parent


def test_modules_without_serial_tests_are_skipped_by_the_serial_run() -> None:
    assert not _may_hold_serial_tests(TESTS / "unit")  # 1,500 tests, none serial: not imported at all
    assert not _may_hold_serial_tests(TESTS / "architecture" / "test_import_graph.py")
    assert _may_hold_serial_tests(TESTS / "e2e" / "test_dashboard.py")
