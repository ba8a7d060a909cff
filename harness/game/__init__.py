"""The game itself, pure and synchronous: the rules of a round (payoff matrix, actions, noise), how long a
game lasts and what its players are told of it (:mod:`~harness.game.horizon`),
what a player sees of a game (:class:`~harness.game.view.RoundView`, the :class:`~harness.game.view.Agent`
contract), one game round by round (:mod:`~harness.game.match`), and the seeds every source of randomness
draws from (:mod:`~harness.game.seeds`). It knows no player, provider or file.

May import: errors, states, util.
"""
