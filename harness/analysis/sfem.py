"""The Strategy Frequency Estimation Method (SFEM) of Dal Bó & Fréchette (2011, AER, "The Evolution of
Cooperation in Infinitely Repeated Games"): which mixture of classic strategies best explains all the games
of one player, by maximum likelihood.

Each of the player's games is played by one strategy k of the set, drawn with probability φ_k; at every
round the player makes the move k prescribes (given the history as played) with probability β, the other
move otherwise (a tremble common to every strategy). RAND makes each move with probability ½ whatever β.
The likelihood of a game under k is β^m (1 − β)^(n − m), with n the player's chosen moves in the game
(fallback rounds, where the harness chose, left out) and m those matching k; under RAND ½^n. The shares φ
and β maximise Π_games Σ_k φ_k L_k. They are found by expectation–maximisation (each step raises the
likelihood; the M-step has a closed form for both φ and β), from equal shares and several β (see
:func:`fit_counts`).

Standard errors are bootstrap ones, as in the paper's tables: the player's games resampled with
replacement, the fit redone on each sample, the standard deviation of the estimates; seeded, so the same
data give the same figures. Strategies that prescribe the same moves in every history observed (ALLC, TFT
and GRIM against an opponent who never defects) cannot be told apart: the likelihood is flat along their
mixture, the EM leaves their shares where the equal start puts them, and their bootstrap errors are large.

Why not the per-game best fit (``per_game_strategy_fit``): it credits each game to the strategy that matches
most of its moves, so a random player's games go to whichever deterministic strategy matched more than half
of them by chance (ALLC in a quarter of them), never to RAND; the pooled likelihood weighs how well each
strategy explains all the games at one error rate, and a random player's is explained best by RAND.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.store.catalog import Catalog
from harness.store.views.profile import FIT_ORDER

STRATEGIES = FIT_ORDER
"""The strategy set, RAND last: ALLC, ALLD, TFT, STFT, GRIM, WSLS (deterministic) and RAND."""
DETERMINISTIC = STRATEGIES[:-1]
BOOTSTRAP = 200
"""Bootstrap samples for the standard errors."""
SEED = 0
START_BETAS = (0.6, 0.8, 0.95)
TOLERANCE = 1e-8  # on the log-likelihood per game, between two EM steps
MAX_STEPS = 2_000
# A resample stops sooner: along the ridge (see fit_counts) the last steps move the estimate by little and cost
# most of the time (a random player's 200 games: 180 s for 200 resamples at 2,000 steps).
BOOTSTRAP_STEPS = 300

CHANCE_TEST = 14.067140449340169
"""χ²(7) at 95%, ``scipy.stats.chi2.ppf(0.95, 7)`` (tests/unit/test_sfem.py checks it): see :func:`fit_counts`."""

Floats = npt.NDArray[np.float64]
Start = tuple[Floats, float]
_ONLY_RAND = np.eye(len(STRATEGIES))[-1]
_BATCH_CELLS = 1 << 17  # resamples × rows × strategies per bootstrap batch: 1 MB an array, near the cache


@dataclass(frozen=True, slots=True)
class SfemFit:
    """One player's estimated strategy shares (in :data:`STRATEGIES` order) and tremble, with bootstrap
    standard errors (None with fewer than two games)."""

    games: int
    shares: tuple[float, ...]
    beta: float
    log_likelihood: float
    share_se: tuple[float, ...] | None
    beta_se: float | None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"games": self.games}
        for i, name in enumerate(STRATEGIES):
            out[name.lower()] = self.shares[i]
            out[f"{name.lower()}_se"] = self.share_se[i] if self.share_se else None
        out["beta"] = self.beta
        out["beta_se"] = self.beta_se
        out["log_likelihood"] = self.log_likelihood
        return out


def _log_likelihoods(matches: Floats, moves: Floats, beta: Floats) -> Floats:
    """log L_k per fit (first axis, one β each), game (rows) and strategy (columns, RAND last)."""
    out = np.empty((beta.shape[0], moves.shape[0], len(STRATEGIES)))
    with np.errstate(divide="ignore", invalid="ignore"):
        log_b = np.log(beta)[:, None, None]
        log_miss = np.log1p(-beta)[:, None, None]
        misses = moves[:, None] - matches
        out[:, :, :-1] = np.where(matches > 0, matches * log_b, 0.0) + np.where(misses > 0, misses * log_miss, 0.0)
    out[:, :, -1] = moves * np.log(0.5)
    return out


def _mixture(log_l: Floats, shares: Floats, weights: Floats) -> tuple[Floats, Floats]:
    """Per fit (first axis): the posterior of each strategy per game (the E-step), written over ``log_l`` (the
    largest array, fits × games × strategies: a copy a step is time), and the total log-likelihood, each row of
    games counted as often as the fit's ``weights`` say."""
    with np.errstate(divide="ignore"):
        log_l += np.log(shares)[:, None, :]
    # The maximum and the sum over the strategies column by column: numpy reduces a short last axis several
    # times slower, and adds in this order too (first to last), so the sums are the same to the bit.
    top = log_l[:, :, 0].copy()
    for k in range(1, log_l.shape[2]):
        np.maximum(top, log_l[:, :, k], out=top)
    log_l -= top[:, :, None]
    dense = np.exp(log_l, out=log_l)
    total = dense[:, :, 0] + dense[:, :, 1]
    for k in range(2, dense.shape[2]):
        total += dense[:, :, k]
    dense /= total[:, :, None]
    return dense, np.sum(weights * (top + np.log(total)), axis=1)


def fit_counts(
    matches: Floats,
    moves: Floats,
    starts: tuple[Start, ...] | None = None,
    steps: int = MAX_STEPS,
    weights: Floats | None = None,
) -> tuple[Floats, float, float]:
    """The maximum-likelihood shares (RAND last), β and log-likelihood for games given as ``matches`` (games ×
    deterministic strategies: the chosen moves each would have made) and ``moves`` (chosen moves per game),
    the best of EM runs from ``starts`` (default: equal shares with β = 0.6, 0.8 and 0.95); ``weights``: how
    many times each row counts (default once). Games without a chosen move carry no information and are left
    out by the caller.

    Several starts, because the likelihood has a ridge: as β nears ½ every strategy plays like RAND, and an EM
    run that drifts there creeps along it (seen: a random player's 200 games left at ALLC 43%, β 0.54, while
    the maximum, from a higher β, is RAND 99%, β 0.86, log-likelihood 0.7 higher).

    The ridge also means that the model is not identified at β = ½, where any shares are RAND: on few games a
    random player's maximum is often some strategy at β just above ½ (seen: 27 games of a coin read as WSLS
    100% at β 0.52), better than chance only by what seven free parameters win from noise. So the fit must beat
    pure chance (every game RAND) by a likelihood-ratio test at 5%, χ² with 7 degrees of freedom (the shares'
    six and β; a conventional threshold, since ½ is the edge of β's range); where it does not, the player is
    reported all RAND, with β ½ (where every strategy is RAND)."""
    uniform = np.full(len(STRATEGIES), 1.0 / len(STRATEGIES))
    counts = np.ones(moves.shape[0]) if weights is None else weights
    chosen = starts or tuple((uniform, b) for b in START_BETAS)
    fits = _em(
        matches,
        moves,
        np.tile(counts, (len(chosen), 1)),
        np.array([s for s, _ in chosen], dtype=np.float64),
        np.array([b for _, b in chosen], dtype=np.float64),
        steps,
    )
    best = 0
    for i in range(1, len(chosen)):  # the first of equals, as a run of starts one by one keeps it
        if fits[2][i] > fits[2][best]:
            best = i
    shares, beta, ll = _beat_chance(matches, moves, counts[None, :], *(f[best : best + 1] for f in fits))
    return shares[0], float(beta[0]), float(ll[0])


def _beat_chance(
    matches: Floats, moves: Floats, weights: Floats, shares: Floats, beta: Floats, ll: Floats
) -> tuple[Floats, Floats, Floats]:
    """Each fit (first axis) as it is where it beats chance (see :func:`fit_counts`), else all RAND at β ½."""
    chance = np.sum(weights * moves, axis=1) * math.log(0.5)
    rand = 2 * (ll - chance) < CHANCE_TEST
    return (
        np.where(rand[:, None], _ONLY_RAND, shares),
        np.where(rand, 0.5, beta),
        np.where(rand, chance, ll),
    )


def _em(
    matches: Floats, moves: Floats, weights: Floats, shares: Floats, beta: Floats, steps: int
) -> tuple[Floats, Floats, Floats]:
    """EM from each start (``shares`` and ``beta``, one row each) on its own ``weights`` of the rows, all at
    once: a fit stops when a step raises its log-likelihood by no more than ``TOLERANCE`` per game, and from
    then on it is left as it is while the others go on; each comes out as an EM run of its own would."""
    games = weights.sum(axis=1)
    shares, beta = shares.copy(), beta.copy()
    previous = np.full(beta.shape[0], -np.inf)
    live, live_weights, live_games = np.arange(beta.shape[0]), weights, games  # the fits still going
    for _ in range(steps):
        post, ll = _mixture(_log_likelihoods(matches, moves, beta[live]), shares[live], live_weights)
        going = ~(ll - previous[live] <= TOLERANCE * live_games)  # a NaN step goes on, as it would alone
        if not going.all():
            live, live_weights, live_games = live[going], live_weights[going], live_games[going]
            if live.size == 0:
                break
            post, ll = post[going], ll[going]
        previous[live] = ll
        post *= live_weights[:, :, None]
        shares[live] = post.sum(axis=1) / live_games[:, None]
        det = post[:, :, :-1]
        tried = np.sum(det * moves[None, :, None], axis=(1, 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            fitted = np.minimum(np.maximum(np.sum(det * matches, axis=(1, 2)) / tried, 0.5), 1.0)
        # Where no game leans to a deterministic strategy the player is all RAND and β explains nothing: kept.
        beta[live] = np.where(tried > 0, fitted, beta[live])
    _, ll = _mixture(_log_likelihoods(matches, moves, beta), shares, weights)
    return shares, beta, ll


def sfem(matches: Floats, moves: Floats, bootstrap: int = BOOTSTRAP, seed: int = SEED) -> SfemFit:
    """The fit and its bootstrap standard errors (games resampled with replacement, ``seed`` fixed)."""
    keep = moves > 0
    n = int(keep.sum())
    # Games alike in their counts are one row counted as often as they occur (a resample is then a count per
    # row): the same likelihood, at the cost of the distinct rows (few, for a deterministic player).
    rows, which = np.unique(np.column_stack([moves[keep], matches[keep]]), axis=0, return_inverse=True)
    which = which.reshape(-1)
    moves, matches = rows[:, 0], rows[:, 1:]
    shares, beta, ll = fit_counts(matches, moves, weights=np.bincount(which, minlength=rows.shape[0]).astype(float))
    if n < 2 or bootstrap < 2:
        return SfemFit(n, tuple(float(s) for s in shares), beta, ll, None, None)
    if rows.shape[0] == 1:  # every resample is the same games: the estimates do not move
        return SfemFit(n, tuple(float(s) for s in shares), beta, ll, (0.0,) * len(STRATEGIES), 0.0)
    rng = np.random.default_rng(seed)
    weights = np.array(
        [np.bincount(which[rng.integers(0, n, n)], minlength=rows.shape[0]) for _ in range(bootstrap)],
        dtype=np.float64,
    )
    # Each resample starts from the estimate (kept off the simplex's edge, where EM cannot move a share), or
    # from equal shares at β 0.8 when the estimate is chance: a third of the cost of every start.
    uniform = np.full(len(STRATEGIES), 1.0 / len(STRATEGIES))
    chance = shares[-1] == 1.0
    start, start_beta = (uniform, START_BETAS[1]) if chance else (0.9 * shares + 0.1 * uniform, max(beta, 0.55))
    draws_s = np.empty((bootstrap, len(STRATEGIES)))
    draws_b = np.empty(bootstrap)
    # The resamples at once (one EM over a stack of weights), in batches of arrays that stay near the cache.
    batch = max(1, _BATCH_CELLS // (rows.shape[0] * len(STRATEGIES)))
    for lo in range(0, bootstrap, batch):
        w = weights[lo : lo + batch]
        fits = _em(matches, moves, w, np.tile(start, (w.shape[0], 1)), np.full(w.shape[0], start_beta), BOOTSTRAP_STEPS)
        draws_s[lo : lo + batch], draws_b[lo : lo + batch], _ = _beat_chance(matches, moves, w, *fits)
    return SfemFit(
        games=n,
        shares=tuple(float(s) for s in shares),
        beta=beta,
        log_likelihood=ll,
        share_se=tuple(float(v) for v in draws_s.std(axis=0, ddof=1)),
        beta_se=float(draws_b.std(ddof=1)),
    )


@dataclass(frozen=True, slots=True)
class PlayerSfem:
    """The fit of one player: ``condition`` None when pooled over the conditions, ``seat`` None when over
    both seats."""

    player_name: str
    condition: str | None
    seat: str | None
    fit: SfemFit

    def as_dict(self) -> dict[str, Any]:
        return {"player_name": self.player_name, "condition": self.condition, "seat": self.seat, **self.fit.as_dict()}


_MATCHES = ", ".join(f"round({n.lower()} * moves)::INTEGER AS {n.lower()}" for n in DETERMINISTIC)


def sfem_by_condition(
    catalog: Catalog,
    run_id: str,
    *,
    pooled: bool = False,
    bootstrap: int = BOOTSTRAP,
    seed: int = SEED,
    players: Collection[str] | None = None,
) -> list[PlayerSfem]:
    """SFEM per condition and seat over the complete games of a run (in plan order), or, ``pooled``, per
    player over every complete game it played, whatever the condition and seat; only the ``players`` named,
    when given (a bootstrap of a player whose games differ, such as RAND's, costs seconds). The per-game match
    counts come from ``per_game_strategy_fit`` (its shares × its moves: a share is matches / moves)."""
    rows = catalog.query(
        f"SELECT condition, player, player_name, moves, {_MATCHES} FROM per_game_strategy_fit "
        "WHERE run_id = ? AND status = 'complete' AND moves > 0 ORDER BY game_id, player",
        [run_id],
    )[1]
    groups: dict[tuple[str, str | None, str | None], list[tuple[Any, ...]]] = defaultdict(list)
    for cond, seat, name, moves, *matches in rows:
        key = (name, None, None) if pooled else (name, cond, seat)
        groups[key].append((moves, *matches))
    out = []
    for (name, cond, seat), games in groups.items():
        if players is not None and name not in players:
            continue
        data = np.asarray(games, dtype=np.float64)
        fit = sfem(data[:, 1:], data[:, 0], bootstrap=bootstrap, seed=seed)
        out.append(PlayerSfem(name, cond, seat, fit))
    if pooled:
        out.sort(key=lambda p: p.player_name)
    return out
