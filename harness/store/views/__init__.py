"""The SQL views every results file and the catalog carry: the one place their SQL lives.

Both the store (which creates them in each run file and over the catalog of runs) and the analysis (which
queries them) read these modules; none of them imports anything of the harness, so neither reader makes a loop.
:mod:`~harness.store.views.core` holds the per-round and per-game views, with :func:`create_views`, and the
definitions of every metric; the other modules, one family each: ``profile`` (behaviour profile and strategy
fit), ``memory_one`` (memory-one profile), ``answers`` (parse outcomes), ``comprehension``, ``leaderboard``
(matchups and ranking), ``evolution``, ``probes``
(counterfactual probes).
"""
