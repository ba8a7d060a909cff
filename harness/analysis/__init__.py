"""Metrics, reports and statistics computed from the results database: read-only, through the store's
catalog and views (the views' SQL lives in :mod:`harness.store.views`).

May import: errors, states, util, store.
"""
