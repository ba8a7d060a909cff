"""Test-only helpers shared by the integration tests and the benchmarks.

Kept import-free on purpose: ``python -m tests.support.llm_server`` must not find its own module
already imported by this package (runpy warns, and the CLI would run a second copy of the module).
"""
