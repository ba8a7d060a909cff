"""What the two moves are called in prompts and replies: C/D, or neutral labels such as J/F.

Its own module because both sides of a model's turn use it: the prompts that name the moves
(:mod:`harness.players.model.prompts`) and the parser that reads them back
(:mod:`harness.players.model.parsing`); neither should have to load the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.game.rules import Action


@dataclass(frozen=True, slots=True)
class ActionLabels:
    """What the two moves are called in prompts and replies.

    Besides the labels, the words "cooperate"/"defect" (and "betray"), with their translations
    (harness.players.model.parsing.words), name the moves, whatever the labels: neutral labels (the
    literature uses J/F to avoid priming) keep the *prompt* free of those words, but a model that answers
    "I will cooperate" under J/F has chosen the cooperative option, which is ``cooperate`` by definition.
    Refusing it would only cost a re-ask (issue 21: the option's meaning instead of its label).
    """

    cooperate: str = "C"
    defect: str = "D"
    cooperate_words: tuple[str, ...] = ("cooperate", "cooperation", "cooperating")
    defect_words: tuple[str, ...] = ("defect", "defection", "defecting", "betray", "betrayal", "betraying")

    def __post_init__(self) -> None:
        for name in ("cooperate", "defect"):
            _check_label(name, getattr(self, name))
        if self.cooperate.casefold() == self.defect.casefold():
            raise ValueError(f"the two labels must differ (ignoring case), both are {self.cooperate!r}")
        for given in (self.cooperate_words, self.defect_words):
            if any(not isinstance(w, str) or not w.strip() for w in given):
                raise ValueError("cooperate_words and defect_words must be non-empty strings")
        if {w.casefold() for w in self.cooperate_words} & {w.casefold() for w in self.defect_words}:
            raise ValueError("cooperate_words and defect_words must not share a word")

    @property
    def uses_words(self) -> bool:
        """True for the default C/D labels: only then does the prompt name the moves by those words."""
        return self.cooperate.casefold() == "c" and self.defect.casefold() == "d"

    def label(self, action: Action) -> str:
        """The label shown to the model for a canonical move."""
        return self.cooperate if action == "C" else self.defect


def _check_label(name: str, value: object) -> None:
    """Labels must survive stripping markdown and punctuation, hence alphanumeric ends."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"the {name} label must be a non-empty string, got {value!r}")
    if not (value[0].isalnum() and value[-1].isalnum()):
        raise ValueError(f"the {name} label {value!r} must begin and end with a letter or digit")
