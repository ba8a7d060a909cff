"""What a report's figures mean, in the words every view of them uses: the scorecard, ``pdbench report`` and the
dashboard show the same notes, so a reader meets one definition wherever a figure appears. Plain strings: the
command line imports them without loading the statistics or the database."""

from __future__ import annotations

FORGIVENESS_NOTE = (
    "Forgiveness is 1 − retaliation: a C rather than a D in the same rounds (after an opponent's D), not a second "
    'measure, nor the behaviour profile\'s "forgiving".'
)
"""The footnote wherever the forgiveness rate is shown beside retaliation (scorecard, ``report``, dashboard)."""
REPEATED_NOTE = (
    '"all alike": every replicate of that condition is the same game, move for move (a deterministic player, '
    "no noise, no shuffled options), so its figures are one game's and have no interval: ± 0 would read as "
    "certainty about the player."
)
"""What "all alike" (:attr:`ConditionSummary.repeated`) means, wherever a condition is shown with it."""
