"""The model player: a language model in a seat. :mod:`~harness.players.model.player` renders each round's
prompt (:mod:`harness.players.model.prompts`), asks through the call path, reads the reply into C or D
(:mod:`harness.players.model.parsing`; a structured reply from its schema field), consults a judge model on a
reply the parser refused (:mod:`~harness.players.model.judge`), re-asks or falls back when it cannot, and asks
the comprehension questions (:mod:`~harness.players.model.comprehension`) a protocol puts before a move.
What a config sets on it beyond prompts is in :mod:`~harness.players.model.settings`, and the moves' labels,
which prompts and parser share, in :mod:`~harness.players.model.labels`: reading a config loads neither the
parser nor the check."""
