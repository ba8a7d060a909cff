"""Metrics, reports and statistics computed from the results database: read-only, through the store's
catalog and views (the views' SQL lives in :mod:`harness.store.views`); and the evolutionary analysis of a
measured payoff table (:mod:`harness.analysis.evolutionary`), which reuses the closed forms of
:mod:`harness.evolution`.

May import: errors, states, util, evolution, store.
"""
