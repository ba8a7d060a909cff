"""Evolution runs: one population run recorded as it goes (``run``), the options and sweep grids of
``pdbench evolve`` (``options``), the payoff games of models in a population played through the engine
(``models``), and sweeps of many runs in processes or on Ray (``sweep``). The dynamics themselves are pure,
in :mod:`harness.evolution`."""
