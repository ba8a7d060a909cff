"""What every registered strategy owes, checked for each one automatically.

Parametrised over the registry, so a new strategy gets these checks without anyone writing
them: it declares a memory depth (Axelrod's value where the strategy exists there) and
keeps to it, a reset instance plays as a new one, a clone plays identically and shares
nothing, and a random strategy is reproducible from its seed while a deterministic one
never draws.
"""

from __future__ import annotations

import itertools
import random
from collections import defaultdict
from typing import Any

import pytest
import yaml

from harness.game.match import Match
from harness.game.rules import ACTIONS, Action, PayoffMatrix
from harness.players.strategies import INFINITE_MEMORY, STRATEGIES, Strategy, make_spec
from harness.players.strategies.base import UNSET, shown_default
from harness.players.strategies.play import play_strategies
from tests.unit.strategies.versus import NoDraws, build, scripted

INF = INFINITE_MEMORY

# Written out from the Axelrod library's classifiers (axelrod 4.14, ``Player.classifier["memory_depth"]``)
# for every strategy it has; DONCE has no Axelrod twin: it reads only the round number.
DECLARED: dict[str, tuple[float, bool]] = {
    "ALLC": (0, False),  # Cooperator
    "ALLD": (0, False),  # Defector
    "TFT": (1, False),  # TitForTat
    "GRIM": (INF, False),  # Grudger
    "GTFT": (1, False),  # GTFT
    "WSLS": (1, False),  # WinStayLoseShift
    "TF2T": (2, False),  # TitFor2Tats
    "STFT": (1, False),  # SuspiciousTitForTat
    "ALT": (1, False),  # Alternator
    "RAND": (0, False),  # Random
    "TTFT": (2, False),  # TwoTitsForTat
    "HTFT": (3, False),  # HardTitForTat
    "BULLY": (1, False),  # Bully
    "GRADUAL": (INF, False),  # Gradual
    "SMAJ": (INF, False),  # GoByMajority
    "HMAJ": (INF, False),  # HardGoByMajority
    "PROBER": (INF, False),  # Prober
    "DONCE": (0, True),
    "EXTORT2": (1, False),  # ZDExtort2
    "PAYNE_BAYES": (INF, False),  # no Axelrod twin (Payne & Alloui-Cros); its posterior carries every round
    "ASHLOCK": (1, False),  # Joss-Ann TitForTat and its Dual (axelrod.fingerprint's probes): TitForTat's depth
}

# Every strategy with its defaults, and a non-default setting of each parameter.
VARIANTS: list[tuple[str, dict[str, Any] | None]] = [
    *((name, None) for name in STRATEGIES),
    ("RAND", {"p": 0.3}),
    ("GTFT", {"generous_prob": 0.1}),
    ("DONCE", {"round": 3}),
    ("EXTORT2", {"chi": 3.0, "phi": 0.05}),
    # Payne & Alloui-Cros (2025)'s variants
    ("WSLS", {"win": "CC_or_DD"}),
    ("GRADUAL", {"peace_moves": 1, "counts_all_defections": False}),
    ("GRADUAL", {"peace_moves": 0}),
    ("PROBER", {"opening": "CDC"}),
    ("ASHLOCK", {"x": 0.75, "y": 0.5}),  # beyond the diagonal: the dual probe
    ("ASHLOCK", {"x": 0.1, "y": 0.2}),  # below the diagonal: Joss-Ann Tit for Tat
]
IDS = [name + ("" if params is None else f"-{params}") for name, params in VARIANTS]
OPPONENTS = ("C", "D", "CD", "CCD", "DDCDCCCD")
NOISES = (0.0, 0.2)
ROUNDS = 12


def play(player: Strategy, script: str, noise: float, noise_seed: int = 7) -> list[tuple[Action, Action]]:
    """One real match of ``ROUNDS`` rounds; the rounds as played (player's move first)."""
    match = Match(PayoffMatrix(), noise, random.Random(noise_seed) if noise else NoDraws(0))
    play_strategies(match, player, scripted(script), ROUNDS)
    return list(zip(match.moves_a, match.moves_b, strict=True))


def state(player: Strategy) -> dict[str, object]:
    """Everything an instance holds apart from its random stream: its parameters, payoffs and
    whatever it keeps between moves (every slot up the class tree, and any instance dict)."""
    names = {slot for cls in type(player).__mro__ for slot in getattr(cls, "__slots__", ())}
    held = {name: getattr(player, name) for name in names if hasattr(player, name)}
    held.update(getattr(player, "__dict__", {}))
    held.pop("rng")
    return held


def seeds_for(cls: type[Strategy]) -> tuple[int, ...]:
    return (0, 1, 2, 3) if cls.stochastic else (0,)


def test_every_registered_strategy_is_in_the_table() -> None:
    assert set(DECLARED) == set(STRATEGIES)


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_declares_its_memory(name: str) -> None:
    cls = STRATEGIES[name]
    declared = next((c.__dict__["memory_depth"] for c in cls.__mro__ if "memory_depth" in c.__dict__), None)
    assert declared is not None, f"{name} must declare memory_depth"
    assert declared == INF or (isinstance(declared, int) and declared >= 0)
    assert (cls.memory_depth, cls.counts_rounds) == DECLARED[name]


@pytest.mark.parametrize(("name", "params"), VARIANTS, ids=IDS)
def test_reset_player_plays_as_new(name: str, params: dict[str, Any] | None) -> None:
    for script, noise, seed in itertools.product(OPPONENTS, NOISES, seeds_for(STRATEGIES[name])):
        used = build(name, params, seed)
        play(used, "DDCD", noise, noise_seed=3)  # a different game first, to leave state behind
        used.reset()
        assert state(used) == state(build(name, params, seed))
        used.rng.seed(seed)  # reset leaves the stream where it is (it is the caller's); rewind it
        assert play(used, script, noise) == play(build(name, params, seed), script, noise)


@pytest.mark.parametrize(("name", "params"), VARIANTS, ids=IDS)
def test_clone_plays_identically_and_shares_nothing(name: str, params: dict[str, Any] | None) -> None:
    for script, noise, seed in itertools.product(OPPONENTS, NOISES, seeds_for(STRATEGIES[name])):
        original = build(name, params, seed)
        twin = original.clone()
        assert type(twin) is type(original) and twin is not original
        assert twin.rng is not original.rng and type(twin.rng) is type(original.rng)
        assert state(twin) == state(original)
        first = play(original, script, noise)
        assert state(twin) == state(build(name, params, seed)), "playing the original changed the clone"
        assert play(twin, script, noise) == first
        # A clone of a used player starts afresh, drawing from a copy of the used player's stream.
        late = original.clone()
        fresh = build(name, params, seed)
        fresh.rng = type(original.rng)()
        fresh.rng.setstate(original.rng.getstate())
        assert play(late, script, noise) == play(fresh, script, noise)
        # A clone given a stream of its own draws from that one.
        given = random.Random(99)
        assert original.clone(given).rng is given


@pytest.mark.parametrize(("name", "params"), VARIANTS, ids=IDS)
def test_same_seed_same_game_and_only_random_strategies_draw(name: str, params: dict[str, Any] | None) -> None:
    cls = STRATEGIES[name]
    games: dict[int, list[list[tuple[Action, Action]]]] = {}
    for seed in range(8):
        # build() hands a deterministic strategy a stream that fails on the first draw
        games[seed] = [play(build(name, params, seed), s, n) for s in OPPONENTS for n in NOISES]
        assert games[seed] == [play(build(name, params, seed), s, n) for s in OPPONENTS for n in NOISES]
    distinct = {repr(g) for g in games.values()}
    if cls.stochastic:
        assert len(distinct) > 1, f"{name} declares itself stochastic but its seed never changes its play"
    else:
        assert len(distinct) == 1


History = tuple[tuple[Action, ...], tuple[Action, ...]]


def histories(max_rounds: int) -> list[History]:
    """Every pair of played-move sequences up to ``max_rounds`` rounds long."""
    out: list[History] = []
    for length in range(max_rounds + 1):
        for rounds in itertools.product(itertools.product(ACTIONS, ACTIONS), repeat=length):
            out.append((tuple(r[0] for r in rounds), tuple(r[1] for r in rounds)))
    return out


def next_move(name: str, params: dict[str, Any] | None, history: History, seed: int) -> Action:
    """The move a fresh player makes after ``history``, fed to it round by round as a match
    would; a random strategy's stream is set to ``seed`` just before that move."""
    spec = make_spec(name, params)
    player = spec.build(PayoffMatrix(), random.Random(0) if spec.cls.stochastic else NoDraws(0))
    own: list[Action] = []
    opp: list[Action] = []
    for mine, theirs in zip(*history, strict=True):
        player.move(own, opp)
        own.append(mine)
        opp.append(theirs)
    player.rng.seed(seed)
    return player.move(own, opp)


def key(history: History, depth: float, counts_rounds: bool) -> tuple[object, ...]:
    """What a strategy of this memory may read: the last ``depth`` rounds (a shorter history
    whole; all of it when the depth is infinite), and the round number if it counts rounds."""
    own, opp = history
    if depth == INF:
        seen: tuple[object, ...] = (own, opp)
    elif depth == 0:
        seen = ()
    else:
        seen = (own[-int(depth) :], opp[-int(depth) :])
    return (*seen, len(own)) if counts_rounds else seen


def moves_by_key(
    name: str, params: dict[str, Any] | None, depth: float, counts_rounds: bool, max_rounds: int
) -> dict[tuple[object, ...], set[Action]]:
    found: dict[tuple[object, ...], set[Action]] = defaultdict(set)
    for seed in seeds_for(STRATEGIES[name]):
        for history in histories(max_rounds):
            found[(seed, *key(history, depth, counts_rounds))].add(next_move(name, params, history, seed))
    return found


SEARCH = 4  # rounds of memory an infinite-memory strategy is shown to exceed


def search_rounds(depth: float) -> int:
    return (SEARCH if depth == INF else int(depth)) + 2


# With infinite memory, any two different histories may give different moves: nothing to hold.
FINITE = [(i, v) for i, v in zip(IDS, VARIANTS, strict=True) if STRATEGIES[v[0]].memory_depth < INF]


@pytest.mark.parametrize(("name", "params"), [v for _, v in FINITE], ids=[i for i, _ in FINITE])
def test_histories_alike_in_the_declared_memory_give_the_same_move(name: str, params: dict[str, Any] | None) -> None:
    cls = STRATEGIES[name]
    found = moves_by_key(name, params, cls.memory_depth, cls.counts_rounds, search_rounds(cls.memory_depth) + 1)
    clashes = {k: v for k, v in found.items() if len(v) > 1}
    assert not clashes, f"{name} reads more than its declared memory: {next(iter(clashes))}"


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_declared_memory_is_not_more_than_it_needs(name: str) -> None:
    """One round less (for an infinite memory: only the last few rounds), or the round number
    left out where it is counted, is not enough: two such histories give different moves."""
    cls = STRATEGIES[name]
    depth, counts = cls.memory_depth, cls.counts_rounds
    shorter = SEARCH if depth == INF else depth - 1
    if shorter >= 0:
        found = moves_by_key(name, None, shorter, counts, search_rounds(depth))
        assert any(len(v) > 1 for v in found.values()), f"{name} needs fewer than {depth} rounds"
    if counts:
        found = moves_by_key(name, None, depth, False, search_rounds(depth))
        assert any(len(v) > 1 for v in found.values()), f"{name} does not need the round number"


def test_the_memory_search_is_exhaustive() -> None:
    # 1 + 4 + 16 + 64 histories of up to three rounds, each pair of moves once
    assert len(histories(3)) == 85
    assert len(set(histories(3))) == 85


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_a_parameter_left_out_is_shown_as_what_it_plays_and_plays_as_that(name: str) -> None:
    """A parameter whose default is None (so that stored runs without it keep their meaning) declares what leaving
    it out means; `pdbench strategies` shows that, and giving that value explicitly plays the same game."""
    for key, field in STRATEGIES[name].Params.model_fields.items():
        shown = shown_default(field)
        assert shown != "None", f"{name}.{key}: say what leaving it out plays (json_schema_extra UNSET)"
        extra = field.json_schema_extra
        if field.default is None and isinstance(extra, dict) and shown != "from the payoffs":
            explicit = {key: yaml.safe_load(shown)}  # as a user types it in a config
            assert extra[UNSET] == shown
            games = []
            for player in (build(name), build(name, explicit)):
                match = Match(PayoffMatrix(), 0.0, NoDraws(0))
                play_strategies(match, player, scripted("CCDDCDDDCCDCDDDDCCCD"), 20)
                games.append(match.moves_a)
            assert games[0] == games[1], (name, key)
