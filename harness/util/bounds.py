"""The bounds of the numbers a user gives in a config or on the command line (docs/experiments.md, "Limits").

Plain constants, in a module that imports nothing: the config models (:mod:`harness.config.sections`), the
limiters (:mod:`harness.calls.limits.settings`) and the command-line options all read them, and ``pdbench --help``
shows them without building a model.
"""

from __future__ import annotations

MAX_SEED = 2**63 - 1  # stored as a BIGINT
MAX_REPLICATES = 10_000_000
# The plan as a whole: strategies play about a million rounds a second and store about 3 bytes a
# round, so the largest plan is some 3 hours and 30 GB; a model plan of that size is unaffordable.
MAX_GAMES = 10_000_000
MAX_PLAN_ROUNDS = 10_000_000_000
# One endpoint's limits: at 0.1 rpm requests are 10 minutes apart, and at 100 tpm a request waits
# (its tokens) * 60 / 100 s: slow, but it starts.
MAX_CONCURRENCY = 10_000
MIN_RPM, MAX_RPM = 0.1, 1_000_000.0
MIN_TPM, MAX_TPM = 100.0, 10_000_000_000.0
