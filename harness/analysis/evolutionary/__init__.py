"""Evolutionary analysis of a measured payoff table, models included (``pdbench analyze``).

From the games of a run (:mod:`.read`: a :class:`MeasuredTable`), for a finite population of N under the Moran
process or pairwise comparison (:mod:`.process`): the fixation matrix (:mod:`.fixation`), the invasion graph
(:mod:`.invasion`), the gradient of selection of every pair (:mod:`.gradient`), the small-mutation-limit stationary
distribution (:mod:`.stationary`), and the replicator's rest points with their stability and the ESS check
(:mod:`.rest_points`); each with a 95% percentile interval from a bootstrap over games (:mod:`.bootstrap`).
:func:`analyze` puts them together. Pure numpy, apart from reading the games.
"""

from __future__ import annotations

from harness.analysis.evolutionary.analysis import Analysis, Figures, analyze, figures
from harness.analysis.evolutionary.process import Population, Process
from harness.analysis.evolutionary.read import measured_table
from harness.analysis.evolutionary.table import MeasuredTable

__all__ = ["Analysis", "Figures", "MeasuredTable", "Population", "Process", "analyze", "figures", "measured_table"]
