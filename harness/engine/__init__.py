"""Running things: an experiment's games under a scheduler (:mod:`~harness.engine.runner`,
:mod:`~harness.engine.scheduler`), the checks made before a run plays (:mod:`~harness.engine.preflight`, and
the one request that checks a served model's structured replies, :mod:`~harness.engine.structured_probe`),
Ctrl-C and stop requests (:mod:`~harness.engine.interrupts`), and evolution runs and sweeps
(:mod:`harness.engine.evolution`).

May import: errors, states, util, game, providers, calls, players, config, evolution, store, analysis.
"""
