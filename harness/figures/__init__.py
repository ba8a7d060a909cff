"""Figures for papers (``pdbench plot``): static images drawn with matplotlib from the numbers of
:mod:`harness.analysis.figures` (the report's and the dashboard's views), one module a kind of figure
(:mod:`~harness.figures.cooperation`, :mod:`~harness.figures.profile`, :mod:`~harness.figures.heatmap`,
:mod:`~harness.figures.evolution`, :mod:`~harness.figures.compare`) in one style (:mod:`~harness.figures.style`),
chosen and checked against the runs by :mod:`~harness.figures.kinds`. No SQL here. Importing the package loads no
matplotlib: :mod:`~harness.figures.kinds` imports it when a figure is drawn.

May import: errors, states, util, store, analysis.
"""
