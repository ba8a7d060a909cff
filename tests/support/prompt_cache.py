"""Prompt caching as the providers account for it, for the loopback server (:mod:`tests.support.llm_server`).

Neither model is the providers' code; each keeps the rules the providers document, which are what the harness's
accounting and prompt layout must get right:

* **OpenAI** (automatic): a prompt whose leading tokens match a prompt served before, in whole steps of
  ``step`` (128) tokens and at least ``minimum`` (1,024) of them, reports those tokens as
  ``usage.prompt_tokens_details.cached_tokens``. Prompts are remembered per model and ``prompt_cache_key``.
* **Anthropic** (explicit): a content block with ``"cache_control": {"type": "ephemeral"}`` (optionally
  ``"ttl": "1h"``) is a breakpoint. The prefix of every block up to and including a breakpoint is written to
  the cache when it is at least ``minimum`` tokens; a later request reads the longest prefix it finds at a
  breakpoint's own block boundary or up to ``lookback`` (20) boundaries before it. Usage reports
  ``cache_read_input_tokens``, ``cache_creation_input_tokens`` (the tokens beyond the hit, up to the last
  breakpoint written; split by ttl in ``cache_creation``) and ``input_tokens``: the rest (Anthropic counts the
  three apart). Blocks are counted in order: tools, system blocks, then each message's content blocks.

Tokens: four characters a token, each message's (or block's) text counted on its own, so appending text keeps
the tokens before it. Entries never expire.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

_CHARS_PER_TOKEN = 4


def _chunks(text: str) -> list[str]:
    """``text`` as tokens: four characters each, the last one shorter."""
    return [text[i : i + _CHARS_PER_TOKEN] for i in range(0, len(text), _CHARS_PER_TOKEN)]


def _text(content: Any) -> str:
    """The text of a message's content: a string, or the texts of its parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def openai_tokens(body: dict[str, Any]) -> list[str]:
    """The prompt's tokens as this model counts them: the tools' JSON (when sent), then for each message a token
    for its role and its text in four-character tokens."""
    tokens: list[str] = []
    if body.get("tools"):
        tokens += _chunks(json.dumps(body["tools"], sort_keys=True))
    for message in body.get("messages", []):
        if isinstance(message, dict):
            tokens.append(f"<|{message.get('role')}|>")
            tokens += _chunks(_text(message.get("content")))
    return tokens


@dataclass
class OpenAICache:
    """OpenAI's automatic prefix cache (see the module docstring)."""

    minimum: int = 1024
    step: int = 128
    _seen: set[tuple[str, str | None, str]] = field(default_factory=set)

    def usage(self, body: dict[str, Any]) -> tuple[int, int]:
        """(prompt tokens, cached tokens) of a request, which is then remembered."""
        tokens = openai_tokens(body)
        scope = (str(body.get("model")), body.get("prompt_cache_key"))
        digest = hashlib.sha256()
        cached = 0
        for end in range(1, len(tokens) + 1):
            digest.update(tokens[end - 1].encode() + b"\x00")
            if end % self.step == 0:
                key = (*scope, digest.hexdigest())
                if key in self._seen and cached == end - self.step:
                    cached = end
                self._seen.add(key)
        return len(tokens), cached if cached >= self.minimum else 0


@dataclass(frozen=True)
class _Block:
    tokens: int
    breakpoint: str | None  # None, or the ttl of its cache_control: "5m" | "1h"


def anthropic_blocks(body: dict[str, Any]) -> list[tuple[str, _Block]]:
    """The request's blocks in cache order (tools, system, messages), each as the running hash of the prefix
    through it and its tokens and breakpoint."""
    items: list[tuple[str, Any]] = [("tools", tool) for tool in body.get("tools") or []]
    system = body.get("system")
    if system:
        items += [("system", block) for block in (system if isinstance(system, list) else [system])]
    for message in body.get("messages", []):
        content = message.get("content") if isinstance(message, dict) else None
        role = message.get("role") if isinstance(message, dict) else None
        items += [(str(role), block) for block in (content if isinstance(content, list) else [content])]
    digest = hashlib.sha256()
    out = []
    for role, block in items:
        control = block.get("cache_control") if isinstance(block, dict) else None
        bare = {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block
        digest.update(json.dumps([role, bare], sort_keys=True).encode() + b"\x00")
        if role == "tools":
            text = json.dumps(bare, sort_keys=True)
        elif isinstance(bare, dict):
            text = str(bare["text"]) if "text" in bare else json.dumps(bare, sort_keys=True)
        else:
            text = str(bare or "")
        ttl = str(control.get("ttl", "5m")) if isinstance(control, dict) else None
        out.append((digest.hexdigest(), _Block(len(_chunks(text)), ttl)))
    return out


@dataclass
class AnthropicCache:
    """Anthropic's breakpoint cache (see the module docstring)."""

    minimum: int = 1024
    lookback: int = 20
    _seen: set[tuple[str, str]] = field(default_factory=set)

    def usage(self, body: dict[str, Any]) -> dict[str, Any]:
        """The request's input usage in Anthropic's shape; its breakpoints' prefixes are then remembered."""
        model = str(body.get("model"))
        blocks = anthropic_blocks(body)
        through: list[int] = []  # tokens of the prefix through each block
        for _, block in blocks:
            through.append((through[-1] if through else 0) + block.tokens)
        total = through[-1] if through else 0
        breakpoints = [i for i, (_, block) in enumerate(blocks) if block.breakpoint is not None]
        read = 0
        for b in breakpoints:
            for j in range(b, max(b - self.lookback, 0) - 1, -1):
                if (model, blocks[j][0]) in self._seen:
                    read = max(read, through[j])
                    break
        written = {"5m": 0, "1h": 0}
        covered = read
        for b in breakpoints:
            if through[b] < self.minimum:
                continue
            self._seen.add((model, blocks[b][0]))
            ttl = blocks[b][1].breakpoint
            written["1h" if ttl == "1h" else "5m"] += max(through[b] - covered, 0)
            covered = max(covered, through[b])
        creation = written["5m"] + written["1h"]
        return {
            "input_tokens": total - read - creation,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": creation,
            "cache_creation": {
                "ephemeral_5m_input_tokens": written["5m"],
                "ephemeral_1h_input_tokens": written["1h"],
            },
        }
