"""Counts in words: "1 game", "2 games", "1,234 answers" (never "1 games")."""

from __future__ import annotations


def plural(n: float, noun: str, nouns: str | None = None, *, number: str | None = None, grouped: bool = True) -> str:
    """``n`` and the noun in the singular when ``n`` is 1, else in the plural (``nouns``, by default the noun
    and an ``s``). ``n`` reads with thousands separators unless not ``grouped``; ``number`` is the count as it
    should read otherwise (a count of a larger whole, "1/3", or a rounded expectation, "about 12")."""
    if number is not None:
        shown = number
    else:
        shown = f"{n:,}" if isinstance(n, int) else f"{n:,g}"
        shown = shown if grouped else shown.replace(",", "")
    return f"{shown} {noun if n == 1 else (nouns or noun + 's')}"
