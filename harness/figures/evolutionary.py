"""The evolutionary analysis drawn (``pdbench plot --kind invasion|stationary``): the invasion graph, and the
small-mutation-limit stationary distribution with its 95% intervals (:mod:`harness.analysis.evolutionary`)."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch
from matplotlib.ticker import PercentFormatter

from harness.analysis.evolutionary import Analysis
from harness.figures.style import WIDTH_IN, colour


def draw_stationary(a: Analysis) -> Figure:
    """One bar per player, its long-run share, with the bootstrap's 95% interval as an error bar."""
    low, high = a.interval("stationary")
    pi = a.point.stationary
    fig = Figure(figsize=(WIDTH_IN, 2.4), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(a.players))
    bars = ax.bar(x, pi, color=[colour(i) for i in range(len(x))])
    for i, bar in enumerate(bars):
        bar.set_gid(f"series-{i}")
    ax.errorbar(x, pi, yerr=[pi - low, high - pi], fmt="none", ecolor="black", capsize=3, linewidth=0.8)
    ax.set_xticks(x, a.players, rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylabel("long-run share")
    ax.set_title(_subtitle(a), fontsize="small")
    return fig


def draw_invasion(a: Analysis) -> Figure:
    """The players on a circle; an arrow i -> j where i invades j (rho_ij > 1/N), as thick as the share of bootstrap
    draws in which it does, labelled rho_ij * N (how many times the neutral probability)."""
    k, n = len(a.players), a.population.size
    share = a.invasion_share()
    fig = Figure(figsize=(WIDTH_IN, WIDTH_IN), layout="constrained")
    ax = fig.add_subplot()
    angles = [math.pi / 2 - 2 * math.pi * i / k for i in range(k)]
    at = [(math.cos(t), math.sin(t)) for t in angles]
    for i, (x, y) in enumerate(at):
        ax.scatter([x], [y], s=300, color=colour(i), zorder=3, gid=f"series-{i}")
        ax.annotate(a.players[i], (x, y), xytext=(1.35 * x, 1.25 * y), ha="center", va="center", fontsize="small")
    for i in range(k):
        for j in range(k):
            if i != j and a.point.rho[i, j] > 1.0 / n:
                arrow = FancyArrowPatch(
                    at[i], at[j], arrowstyle="-|>", mutation_scale=10, shrinkA=9, shrinkB=9,
                    connectionstyle="arc3,rad=0.12", linewidth=0.5 + 2 * share[i, j], color=colour(i),
                )  # fmt: skip
                ax.add_patch(arrow)
                mx, my = (at[i][0] + at[j][0]) / 2, (at[i][1] + at[j][1]) / 2
                ax.annotate(f"{a.point.rho[i, j] * n:.1f}", (mx, my), fontsize="x-small", ha="center", va="center")
    ax.set_xlim(-1.7, 1.7)
    ax.set_ylim(-1.5, 1.5)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"i → j: rho_ij > 1/N (label rho·N)\n{_subtitle(a)}", fontsize="small")
    return fig


def _subtitle(a: Analysis) -> str:
    return (
        f"N = {a.population.size}, {a.population.process.value}, {a.population.intensity_label}; "
        f"95% intervals over {a.draws:,} draws"
    )
