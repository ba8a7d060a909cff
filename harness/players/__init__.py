"""Who plays: the classic strategies (:mod:`harness.players.strategies`, one family per file, with their
registry and the synchronous strategy-vs-strategy game) and the model player (:mod:`harness.players.model`:
its prompts, the parser that reads its answers, comprehension questions, and the player that asks through the
call path).

May import: errors, states, util, game, providers, calls.
"""
