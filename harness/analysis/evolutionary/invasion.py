"""The invasion graph: i invades j when one i mutant among N - 1 j fixes with a probability above the neutral
1/N, i.e. selection favours its fixation (Nowak et al. 2004: rho_ij > 1/N). An edge i -> j for each such pair; a
pair can have edges both ways (each favoured as a rare mutant), one, or none.
"""

from __future__ import annotations

import numpy as np


def invades(rho: np.ndarray, size: int) -> np.ndarray:
    """``out[i, j]``: whether i invades j (boolean; False on the diagonal)."""
    with np.errstate(invalid="ignore"):
        out = np.asarray(rho > 1.0 / size)
    np.fill_diagonal(out, False)
    return out
