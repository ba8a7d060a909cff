"""Keys: damaged keys are named, never quoted; every form of a key is masked wherever text is made.

Expected texts are written out by hand: what an escaped, percent-encoded or cut key looks like, and
what must remain of the text around it.
"""

from __future__ import annotations

import base64
import json
import logging
import random
from typing import Any

import pytest

from harness.errors import ConfigError
from harness.providers.keys import MASK, Scrubber, check_key, key_forms, key_in, key_problem, remember_key, scrub

# A damaged key: a line break pasted into it, as `echo`ed into .env from two lines.
DAMAGED = "sk-live-0123456789abcdef\nTAIL-secret-XYZ"
# A sound key with the characters that quoting and URL-encoding change.
SOUND = 'sk-proj-AbC/dEf+GhI=jKl"q\\0123456789'


def windows(text: str, n: int = 8) -> set[str]:
    return {text[i : i + n] for i in range(len(text) - n + 1)}


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("sk-abc\ndef", "a line break at position 7 of 10"),
        ("sk-abc\rdef", "a line break at position 7 of 10"),
        ("\tsk-abc", "a tab at position 1 of 7"),
        ("sk-\x07abc", "an invisible control character (U+0007) at position 4 of 7"),
        ("sk-\x7fabc", "an invisible control character (U+007F) at position 4 of 7"),
        ("sk-\u200babc", "an invisible control character (U+200B) at position 4 of 7"),  # zero-width space
        ("sk-\u2028abc", "an invisible control character (U+2028) at position 4 of 7"),  # line separator
        ("sk-abc\u2019", "a character outside ASCII (U+2019) at position 7 of 7"),  # a typographic quote
        ("sk-abc\u00a0d", "a character outside ASCII (U+00A0) at position 7 of 8"),  # no-break space
    ],
)
def test_a_damaged_key_is_described_by_position_and_kind(key: str, problem: str) -> None:
    assert key_problem(key) == problem


@pytest.mark.parametrize("key", ["sk-abc", "sk-abc def", SOUND, "none", "~!@#$%^&*()_+{}|:<>?"])
def test_printable_ascii_keys_are_sound(key: str) -> None:
    assert key_problem(key) is None
    assert check_key(key, "OPENAI_API_KEY", "openai/x") == key


def test_the_message_names_the_variable_and_what_to_do_and_quotes_nothing_of_the_key() -> None:
    with pytest.raises(ConfigError) as caught:
        check_key(DAMAGED, "MY_KEY", "openai/gpt-4o-mini")
    message = str(caught.value)
    assert message.startswith("openai/gpt-4o-mini: the key in MY_KEY has a line break at position 25 of 40")
    assert "nothing was sent" in message and "set MY_KEY again, on one line" in message and ".env" in message
    assert "\n" not in message
    assert not [w for w in windows(DAMAGED, 4) if w in message and w.strip() not in ("", "-")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # httpx/h11 rejecting the header: the bytes' repr, line break escaped
        (
            "Illegal header value b'Bearer sk-live-0123456789abcdef\\nTAIL-secret-XYZ'",
            "Illegal header value b'Bearer ***'",
        ),
        ('{"key": "sk-live-0123456789abcdef\\nTAIL-secret-XYZ"}', '{"key": "***"}'),  # JSON
        ("GET /check?key=sk-live-0123456789abcdef%0ATAIL-secret-XYZ HTTP/1.1", "GET /check?key=*** HTTP/1.1"),
        ("GET /check?key=sk-live-0123456789abcdef%0aTAIL-secret-XYZ HTTP/1.1", "GET /check?key=*** HTTP/1.1"),
        ("sk-live-0123456789abcdef", "***"),  # the part before the line break, alone
        ("TAIL-secret-XYZ was refused", "*** was refused"),  # the part after it
        ("key sk-live-01234…", "key ***…"),  # a cut message: a prefix of 13 characters
        ("...secret-XYZ", "...***"),  # a suffix of 10
        (
            "key sk-live (7 characters) and ret-XYZ (7)",
            "key sk-live (7 characters) and ret-XYZ (7)",
        ),  # too short to tell
        ("nothing of it here", "nothing of it here"),
    ],
)
def test_every_form_and_every_long_enough_piece_of_a_damaged_key_is_masked(text: str, expected: str) -> None:
    assert Scrubber([DAMAGED])(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('proxy said: key sk-proj-AbC/dEf+GhI=jKl"q\\0123456789 is not allowed', "proxy said: key *** is not allowed"),
        ("url ?k=sk-proj-AbC%2FdEf%2BGhI%3DjKl%22q%5C0123456789&x=1", "url ?k=***&x=1"),  # quote(safe="")
        ("url ?k=sk-proj-AbC/dEf%2BGhI%3DjKl%22q%5C0123456789&x=1", "url ?k=***&x=1"),  # quote(): "/" kept
        ("form k=sk-proj-AbC%2FdEf%2BGhI%3DjKl%22q%5C0123456789", "form k=***"),
        ('{"message": "bad key sk-proj-AbC/dEf+GhI=jKl\\"q\\\\0123456789"}', '{"message": "bad key ***"}'),  # JSON
        ("repr: 'sk-proj-AbC/dEf+GhI=jKl\"q\\\\0123456789'", "repr: '***'"),  # Python's repr doubles the backslash
        ("two: sk-proj-AbC/dEf+GhI and 0123456789", "two: *** and ***"),
    ],
)
def test_a_sound_key_is_masked_quoted_escaped_and_percent_encoded(text: str, expected: str) -> None:
    assert Scrubber([SOUND])(text) == expected


def test_a_short_key_is_masked_only_whole_and_is_not_remembered_for_the_whole_process() -> None:
    assert Scrubber(["none"])("key none, nonetheless") == "key ***, ***theless"
    remember_key("none")
    assert scrub("none of these") == "none of these"


def test_remembered_keys_are_scrubbed_from_log_records_and_their_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    key = "sk-Zq81xPw3Lm5Rt7Vy2N"
    remember_key(key)
    assert scrub(f"x {key} y") == f"x {MASK} y"
    log = logging.getLogger("tests.keys")
    with caplog.at_level(logging.INFO):
        log.warning("request failed: header %r rejected", f"Bearer {key}\n")
        try:
            raise RuntimeError(f"refused {key!r}")
        except RuntimeError:
            log.exception("the run stopped")
    text = caplog.text
    assert "request failed: header 'Bearer ***\\n' rejected" in text
    assert "RuntimeError: refused '***'" in text and "the run stopped" in text
    assert not windows(key) & windows(text)


# --- base64 forms, whole keys in prompts, and the scan that skips text holding no key ----------------------


@pytest.mark.parametrize("prefix", ["", "u:", "ab:", "Bearer ", "user:"])
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_a_key_base64_encoded_alone_or_inside_longer_credentials_is_masked(prefix: str, encode: Any) -> None:
    encoded = encode(f"{prefix}{SOUND}".encode()).decode()
    masked = Scrubber([SOUND])(f"header: {encoded} (end)")
    assert masked.startswith("header: ") and masked.endswith(" (end)") and MASK in masked
    # Only the groups that also encode the prefix or the padding may remain: at most 8 characters each side.
    assert len(masked) <= len("header:  (end)") + len(MASK) + 16


def test_key_in_names_the_variable_of_a_whole_key_in_any_form_and_ignores_fragments() -> None:
    key = "sk-lab-Pq7Xe2Vn9Ry4Kb5"
    remember_key(key, "LOCAL_KEY")
    assert key_in(f"prompt: {key}.") == "LOCAL_KEY"
    assert key_in(json.dumps({"content": f"x {key}"})) == "LOCAL_KEY"
    assert key_in(base64.b64encode(key.encode()).decode()) == "LOCAL_KEY"
    assert key_in("a code Pq7Xe2Vn9 only") is None  # nine characters of it, not the key: sent
    assert scrub("a code Pq7Xe2Vn9 only") == "a code *** only"  # but what is stored is scrubbed of runs too


def test_the_skipping_scan_masks_exactly_what_a_scan_of_every_position_masks() -> None:
    scrubber = Scrubber([SOUND, "sk-ant-Hy3Rk6Jd1Fs5Gc0P"])
    forms = sorted(key_forms(SOUND))
    rng = random.Random(7)
    for _ in range(2000):
        parts = []
        for _ in range(rng.randint(1, 6)):
            if rng.random() < 0.4:
                form = rng.choice(forms)
                start = rng.randint(0, len(form))
                parts.append(form[start : start + rng.randint(0, 30)])
            else:
                parts.append("".join(rng.choice("abcXY01 -_sk/+=") for _ in range(rng.randint(0, 15))))
        text = "".join(parts)
        every = [i for i in range(len(text) - 7) if text[i : i + 8] in scrubber._windows]
        spans: list[list[int]] = []
        for i in every:
            if spans and i <= spans[-1][1]:
                spans[-1][1] = i + 8
            else:
                spans.append([i, i + 8])
        expected, last = "", 0
        for start, end in spans:
            expected += text[last:start] + MASK
            last = end
        expected += text[last:]
        assert scrubber._mask_runs(text) == expected, text
