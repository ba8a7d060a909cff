"""Structured replies: the move asked for through the provider's own constrained output, not free text.

With ``prompts.answer_format: structured`` a model's move request carries a :class:`ReplySchema`: a JSON object
whose ``action`` is one of the two labels (an enum), optionally after a ``reasoning`` string. Each provider asks
for it its own way (OpenAI and compatible servers: ``response_format`` with a strict JSON schema; Anthropic: a
forced call of one tool whose input is that schema; the mock: a JSON object), and hands back the object as JSON
text, so the reply is read from its field (:meth:`ReplySchema.read`) and no free-text parsing is needed. A reply
that does not follow the schema (a server that ignored it, an answer cut short) is unreadable, recorded as such.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

TOOL_NAME = "choose"
"""The one tool an Anthropic model is made to call with its move (its input is the schema)."""
SCHEMA_NAME = "move"
"""The schema's name in OpenAI's ``response_format``."""


@dataclass(frozen=True, slots=True)
class ReplySchema:
    """The structured reply asked for: ``action``, one of ``labels`` (the cooperate label, then the defect
    label, in the same order every round, so the request's fixed part stays byte-identical), after a
    ``reasoning`` string when ``reasoning`` is on. Part of the request's identity (the cache key and
    ``request_json``): a structured request and a free one are different requests."""

    labels: tuple[str, str]
    reasoning: bool = False

    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of the reply (strict: every property required, no others)."""
        properties: dict[str, Any] = {}
        if self.reasoning:
            properties["reasoning"] = {"type": "string"}
        properties["action"] = {"type": "string", "enum": list(self.labels)}
        return {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        }

    def as_dict(self) -> dict[str, Any]:
        """How the request records it (``request_json.params.reply``) and keys it."""
        return {"labels": list(self.labels), "reasoning": self.reasoning}

    def read(self, text: str) -> str | ReplyViolation:
        """The label the reply chose, or why it does not follow the schema (a :class:`ReplyViolation`)."""
        try:
            value = json.loads(text)
        except ValueError:
            return ReplyViolation("the structured reply is not JSON")
        if not isinstance(value, dict):
            return ReplyViolation("the structured reply is not a JSON object")
        action = value.get("action")
        if action not in self.labels:
            return ReplyViolation(f"the structured reply's action {action!r} is not one of {' or '.join(self.labels)}")
        if self.reasoning and not isinstance(value.get("reasoning"), str):
            return ReplyViolation("the structured reply has no reasoning string")
        if set(value) - {"action", "reasoning"}:
            return ReplyViolation("the structured reply has fields the schema does not allow")
        return str(action)


REFUSED_HINT = (
    "the server refused the structured reply (answer_format: structured) and will refuse it every time: ask it "
    "for answer_format: json instead, or use a server that takes a JSON schema ({reason})"
)
"""The reason recorded when a server answers a structured request with a 400 or 422 (it does not take
``response_format`` or ``tools``); said once per game, which then fails for good."""


@dataclass(frozen=True, slots=True)
class ReplyViolation:
    """Why a structured reply does not follow its schema (recorded as the call's error)."""

    reason: str
