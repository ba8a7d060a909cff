"""API keys: refused when damaged, and kept out of every text PDBench prints, logs or stores.

A key leaks into text by accident, not by design: an HTTP library that rejects a header quotes the
header (``Illegal header value b'Bearer sk-...\\n...'``), a careless proxy echoes the key in its error,
a message is cut at 500 characters. Quoting escapes the key (``\\n``, ``\\u2019``, ``%0A``) and cutting
truncates it, so replacing the key as typed misses both. :class:`Scrubber` masks the key in each of
these forms and any run of at least :data:`MIN_FRAGMENT` characters of it (a prefix left by a cut, the
pieces on either side of an escaped line break).

Keys are checked before any request (:func:`check_key`): a key with a line break or another control
character cannot be sent in a header, and a failing request would only print it. The message says
which variable is damaged and how, never any of its characters.

Every key the registry resolves is remembered (:func:`remember_key`) so that texts made far from the
provider (the CLI's error line, a log record, a dashboard message) are scrubbed too (:func:`scrub`);
so is every key the environment holds under a provider's name (:func:`remember_environment_keys`,
called by the call path), used or not: a prompt file could have copied any of them. The call path
refuses to send a prompt holding a remembered key whole (:func:`key_in`) and scrubs what it stores.

A key's forms include its base64 encodings (standard and URL-safe, with or without padding, and the
part that stays the same when the key is encoded inside a longer text, as ``Basic`` credentials are),
since an error may quote an encoded header.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import re
import threading
import traceback
import unicodedata
from collections.abc import Iterable, Mapping
from urllib.parse import quote, quote_plus

from harness.errors import ConfigError

MASK = "***"
MIN_FRAGMENT = 8  # a run of this many characters of a key is masked wherever it appears
_GRAM = MIN_FRAGMENT // 2  # any run of MIN_FRAGMENT characters covers a whole aligned run of this many
_CHUNKS = re.compile(rf"(?s).{{{_GRAM}}}")
_PERCENT = re.compile(r"%[0-9A-F]{2}")
KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
"""The variables that hold a provider's key in every environment (keys named by ``api_key_env`` are added)."""


def key_problem(key: str) -> str | None:
    """What makes ``key`` unusable in an HTTP header, named without quoting any of it (None: nothing).

    Keys are printable ASCII on one line; anything else is damage (a line break pasted with the key,
    two values run together, a typographic character from a document)."""
    for i, char in enumerate(key, start=1):
        code = ord(char)
        if 0x20 <= code < 0x7F:
            continue
        if char in "\r\n":
            what = "a line break"
        elif char == "\t":
            what = "a tab"
        elif unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"):
            what = f"an invisible control character (U+{code:04X})"
        else:
            what = f"a character outside ASCII (U+{code:04X})"
        return f"{what} at position {i} of {len(key)}"
    return None


def check_key(key: str, env_name: str, label: str) -> str:
    """``key`` if it can be sent; else a :class:`ConfigError` naming ``env_name`` and the damage, not the key."""
    problem = key_problem(key)
    if problem is not None:
        raise ConfigError(
            f"{label}: the key in {env_name} has {problem}, so it cannot be sent and nothing was sent with it. "
            f"API keys are one line of printable ASCII: set {env_name} again, on one line and without quotes "
            "or spaces around it, in the environment or in .env (see .env.example)."
        )
    return key


def key_forms(key: str) -> set[str]:
    """``key`` as it may appear in text: as typed, escaped as Python and JSON quote it, percent-encoded."""
    forms = {
        key,
        repr(key)[1:-1],
        key.encode("unicode_escape").decode("ascii"),
        json.dumps(key)[1:-1],
        json.dumps(key, ensure_ascii=False)[1:-1],
        quote(key, safe=""),
        quote(key),
        quote_plus(key),
    }
    for encoding in ("utf-8", "latin-1"):
        with contextlib.suppress(UnicodeEncodeError):
            forms.add(repr(key.encode(encoding))[2:-1])
    forms |= {_PERCENT.sub(lambda m: m.group().lower(), f) for f in forms if "%" in f}
    forms |= base64_forms(key)
    return {f for f in forms if f}


def base64_forms(key: str) -> set[str]:
    """``key`` base64-encoded, standard and URL-safe: whole (with and without padding), and, for each of the
    three alignments it may have inside a longer encoded text (``Basic base64(user:key)``), the part of the
    encoding that depends on the key alone (the first and last groups also encode its neighbours)."""
    data = key.encode("utf-8", "surrogatepass")
    forms: set[str] = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(data).decode("ascii")
        forms |= {whole, whole.rstrip("=")}
        for offset in (1, 2):
            encoded = encode(b"\0" * offset + data).decode("ascii")
            end = len(encoded) - 4 if (offset + len(data)) % 3 else len(encoded)
            forms.add(encoded[4:end])
        end = len(whole) - 4 if len(data) % 3 else len(whole)
        forms.add(whole[:end])
    return {f for f in forms if f}


class Scrubber:
    """Masks some keys, in every form of :func:`key_forms` and every run of :data:`MIN_FRAGMENT`
    characters of those forms, in any text. A key shorter than that is masked where it appears whole."""

    def __init__(self, keys: Iterable[str]) -> None:
        forms = set().union(*(key_forms(k) for k in keys if k))
        self._whole = sorted((f for f in forms if len(f) < MIN_FRAGMENT), key=len, reverse=True)
        self._windows = {f[i : i + MIN_FRAGMENT] for f in forms for i in range(len(f) - MIN_FRAGMENT + 1)}
        self._grams = {w[i : i + _GRAM] for w in self._windows for i in range(MIN_FRAGMENT - _GRAM + 1)}

    def __bool__(self) -> bool:
        return bool(self._whole or self._windows)

    def __call__(self, text: str) -> str:
        if self._windows and len(text) >= MIN_FRAGMENT:
            text = self._mask_runs(text)
        for form in self._whole:
            text = text.replace(form, MASK)
        return text

    def _mask_runs(self, text: str) -> str:
        """``text`` with every run of a key's characters masked, the runs found from where they can start.

        A run of :data:`MIN_FRAGMENT` characters covers a whole one of the text's aligned
        :data:`_GRAM`-character chunks, which is then part of a key: only the few places next to such a
        chunk are looked at, so a long prompt or answer is not scanned character by character."""
        grams, windows, n, g = self._grams, self._windows, MIN_FRAGMENT, _GRAM
        hits = [i * g for i, chunk in enumerate(_CHUNKS.findall(text)) if chunk in grams]
        if not hits:
            return text
        last_start = len(text) - n
        starts = sorted({p for q in hits for p in range(max(0, q - g), min(q, last_start) + 1)})
        spans: list[list[int]] = []
        for i in starts:
            if text[i : i + n] in windows:
                if spans and i <= spans[-1][1]:
                    spans[-1][1] = i + n
                else:
                    spans.append([i, i + n])
        if not spans:
            return text
        out, last = [], 0
        for start, end in spans:
            out += [text[last:start], MASK]
            last = end
        out.append(text[last:])
        return "".join(out)


_lock = threading.Lock()
_known: dict[str, str] = {}  # key -> the variable it came from
_whole_forms: dict[str, str] = {}  # every form of every known key (see key_forms) -> its variable
_scrubber = Scrubber(())


def remember_key(key: str | None, variable: str = "an API key variable") -> None:
    """Scrub ``key`` from every text :func:`scrub` sees from now on (and from log records), and refuse to
    send a prompt holding it (:func:`key_in`); ``variable`` names where it came from, for that message.

    Keys shorter than :data:`MIN_FRAGMENT` are placeholders for servers that check no key (``none``),
    not secrets: masking such a word everywhere would garble messages, so they are not remembered."""
    global _scrubber
    if not key or len(key) < MIN_FRAGMENT or key in _known:
        return
    with _lock:
        if not _known:
            _install_log_scrubbing()
        _known[key] = variable
        _whole_forms.update((form, variable) for form in key_forms(key) if len(form) >= MIN_FRAGMENT)
        _scrubber = Scrubber(_known)


def remember_environment_keys(names: Iterable[str] = (), environ: Mapping[str, str] = os.environ) -> None:
    """Remember the keys the environment holds under :data:`KEY_VARIABLES` and under ``names`` (the
    ``api_key_env`` of a config), whether or not a run uses them: any of them could reach a prompt."""
    for name in dict.fromkeys((*KEY_VARIABLES, *names)):
        value = (environ.get(name) or "").strip()
        if value:
            remember_key(value, name)


def key_in(text: str) -> str | None:
    """The variable whose key ``text`` holds whole, in any of its forms (see :func:`key_forms`), or None.

    Whole keys, not runs of :data:`MIN_FRAGMENT` characters, decide what may not be sent: a prompt file that
    copied a key holds all of it, while an ordinary word can match eight characters of a placeholder key
    (``sk-no-key-required``). Answers and errors are stored scrubbed of the runs as well (:func:`scrub`)."""
    for form, variable in list(_whole_forms.items()):
        if form in text:
            return variable
    return None


def scrub(text: str) -> str:
    """``text`` without any key remembered in this process, in any of its forms."""
    scrubber = _scrubber
    return scrubber(text) if scrubber else text


def _install_log_scrubbing() -> None:
    """Scrub every log record of the process (PDBench's, the SDKs', Streamlit's) as it is made."""
    previous = logging.getLogRecordFactory()

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is logging's to report, as it is
            return record
        if (clean := scrub(message)) != message:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[1] is not None:
            text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
            if (clean := scrub(text)) != text:
                record.exc_info, record.exc_text = None, clean  # formatters print exc_text as it is
        return record

    logging.setLogRecordFactory(factory)
