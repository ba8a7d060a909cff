"""Numbers in an answer, written in digits or in words, with where each stands.

A comprehension answer is scored as a person would score it, and a person reads "three rounds",
"tres rondas", "zwanzig Punkte" or "十轮" as the numbers they are. Languages: those the move parser
reads (English, Spanish, French, German, Portuguese, Italian, Dutch, Russian, Hindi, Arabic, Chinese,
Japanese, Korean). Number words compose as they are spoken: "twenty-five", "one hundred and five",
"treinta y cinco", "quatre-vingt-dix", "fünfundzwanzig", "二十五". A word that is also an ordinary word
in another language ("once", "due", "un", "ein", "een") counts only before a counted noun (points,
rounds: "un punto", "ein Punkt"). A number followed by "percent" (in words or "%") is divided by 100.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNITS: dict[str, int] = {}
_TENS: dict[str, int] = {}


def _add(table: dict[str, int], words: str, values: range | list[int]) -> None:
    for word, value in zip(words.split(), values, strict=True):
        table[word] = value


# 0..19 and the tens, per language (several spellings share a value).
_add(_UNITS, "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
     "sixteen seventeen eighteen nineteen", range(20))  # fmt: skip
_add(_TENS, "twenty thirty forty fifty sixty seventy eighty ninety", range(20, 100, 10))
_add(_UNITS, "cero uno dos tres cuatro cinco seis siete ocho nueve diez", range(11))  # es
_add(_UNITS, "doce trece catorce quince dieciséis dieciseis diecisiete dieciocho diecinueve",
     [12, 13, 14, 15, 16, 16, 17, 18, 19])  # fmt: skip
_add(_TENS, "veinte treinta cuarenta cincuenta sesenta setenta ochenta noventa", range(20, 100, 10))
_add(_UNITS, "zéro deux trois quatre cinq sept huit neuf dix onze douze treize quatorze quinze seize",
     [0, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16])  # fmt: skip  # fr (six: en)
_add(_TENS, "vingt vingts trente quarante cinquante soixante", [20, 20, 30, 40, 50, 60])
_add(_UNITS, "null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn vierzehn fünfzehn "
     "sechzehn siebzehn achtzehn neunzehn", range(20))  # fmt: skip  # de
_add(
    _TENS,
    "zwanzig dreißig dreissig vierzig fünfzig sechzig siebzig achtzig neunzig",
    [20, 30, 30, 40, 50, 60, 70, 80, 90],
)
_add(_UNITS, "dois duas três quatro sete oito dez onze doze treze catorze quatorze quinze dezesseis dezasseis "
     "dezessete dezassete dezoito dezenove dezanove",
     [2, 2, 3, 4, 7, 8, 10, 11, 12, 13, 14, 14, 15, 16, 16, 17, 17, 18, 19, 19])  # fmt: skip  # pt
_add(_TENS, "vinte trinta quarenta cinquenta sessenta setenta oitenta noventa", range(20, 100, 10))
_add(_UNITS, "tre quattro sei sette otto nove dieci undici dodici tredici quattordici quindici sedici "
     "diciassette diciotto diciannove", [3, 4, 6, 7, 8, 9, *range(10, 20)])  # fmt: skip  # it
_add(_TENS, "venti trenta quaranta cinquanta sessanta settanta ottanta novanta", range(20, 100, 10))
_add(_UNITS, "nul één twee drie vier vijf zes zeven acht negen tien elf twaalf dertien veertien vijftien zestien "
     "zeventien achttien negentien", range(20))  # fmt: skip  # nl
_add(_TENS, "twintig dertig veertig vijftig zestig zeventig tachtig negentig", range(20, 100, 10))
_add(_UNITS, "ноль один одна одно два две три четыре пять шесть семь восемь девять десять одиннадцать двенадцать "
     "тринадцать четырнадцать пятнадцать шестнадцать семнадцать восемнадцать девятнадцать",
     [0, 1, 1, 1, 2, 2, *range(3, 20)])  # fmt: skip  # ru
_add(_UNITS, "одного двух трёх трех четырёх четырех пяти шести семи восьми девяти десяти",
     [1, 2, 3, 3, 4, 4, 5, 6, 7, 8, 9, 10])  # fmt: skip  # ru, genitive ("из десяти раундов")
_add(_TENS, "двадцать тридцать сорок пятьдесят шестьдесят семьдесят восемьдесят девяносто", range(20, 100, 10))
_add(_UNITS, "शून्य एक दो तीन चार पाँच पांच छह छः सात आठ नौ दस ग्यारह बारह तेरह चौदह पंद्रह सोलह सत्रह अठारह उन्नीस",
     [0, 1, 2, 3, 4, 5, 5, 6, 6, 7, 8, 9, *range(10, 20)])  # fmt: skip  # hi
_add(_TENS, "बीस तीस चालीस पचास साठ सत्तर अस्सी नब्बे", range(20, 100, 10))
_add(_UNITS, "صفر واحد واحدة اثنان اثنين اثنتان ثلاث ثلاثة أربع أربعة خمس خمسة ست ستة سبع سبعة ثماني ثمانية تسع "
     "تسعة عشر عشرة", [0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10])  # fmt: skip  # ar
_add(_TENS, "عشرون عشرين ثلاثون ثلاثين أربعون أربعين خمسون خمسين", [20, 20, 30, 30, 40, 40, 50, 50])
_UNITS.update({"quatre-vingt": 80, "quatre-vingts": 80})
_MULTIPLIERS = {
    "hundred": 100, "thousand": 1000, "million": 1_000_000, "cien": 100, "ciento": 100, "mil": 1000, "cent": 100,
    "cents": 100, "mille": 1000, "hundert": 100, "tausend": 1000, "cem": 100, "cento": 100, "honderd": 100,
    "duizend": 1000, "сто": 100, "тысяча": 1000, "тысячи": 1000, "सौ": 100, "हज़ार": 1000, "हजार": 1000,
    "مائة": 100, "مئة": 100, "ألف": 1000,
}  # fmt: skip
# Words that are also ordinary words elsewhere ("I defected once", "due to", the articles "un", "ein"):
# a number only before a counted noun.
_AMBIGUOUS = {
    "once": 11, "due": 2, "un": 1, "une": 1, "una": 1, "um": 1, "uma": 1, "ein": 1, "eine": 1, "einen": 1,
    "einem": 1, "een": 1, "sei": 6, "mil": 1000, "cent": 100, "एक": 1, "दो": 2,
}  # fmt: skip
_JOINERS = frozenset({"and", "y", "et", "und", "e", "en", "و"})
_COUNTED = re.compile(
    r"\s*(?:points?|pts|rounds?|turns?|puntos?|rondas?|turnos?|tours?|manches?|punkte?|runden?|pontos?|rodadas?"
    r"|punti|turni|punten|punt|rondes?|очк\w*|балл\w*|раунд\w*|ход\w*|अंक|राउंड|نقط\w*|نقاط|جول\w*)\b",
    re.IGNORECASE,
)
_PERCENT = re.compile(
    r"\s*(?:%|percent\b|per\s+cent\b|por\s+ciento\b|pour\s+cent\b|prozent\b|por\s+cento\b|per\s+cento\b"
    r"|procent\b|процент\w*|प्रतिशत|في\s+المائة|٪)",
    re.IGNORECASE,
)
# Letters, with the vowel signs of Devanagari and the marks of Arabic (not \w in Python's re).
_LETTER = r"(?:[^\W\d_]|[\u0900-\u0903\u093a-\u094f\u0951-\u0957\u0962\u0963\u064b-\u065f\u0670])"
_WORD = re.compile(rf"{_LETTER}+(?:[-']{_LETTER}+)*")
# Digits not inside a word of a spaced script ("3rd", "R2D2"); Chinese, Japanese and Korean put
# counters right after a number ("5分", "3점").
_SPACED = r"[^\W_\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]"
_DIGITS = re.compile(rf"(?<!{_SPACED})(?<!\.)[-−]?\d+(?:\.\d+)?(?!{_SPACED})")
# Chinese and Japanese numerals (十 = 10, 二十五 = 25, 一百 = 100) and Korean ones before a counter.
_CJK = re.compile(r"[零〇一二两三四五六七八九十百千万]+")
_CJK_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CJK_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_KOREAN = re.compile(
    r"(?:(?P<native>하나|한|둘|두|셋|세|넷|네|다섯|여섯|일곱|여덟|아홉|열|스물|서른|마흔|쉰)|(?P<sino>[일이삼사오육칠팔구십백]+))(?=\s*(?:점|라운드|번|회|판))"
)
_KOREAN_NATIVE = {
    "하나": 1, "한": 1, "둘": 2, "두": 2, "셋": 3, "세": 3, "넷": 4, "네": 4, "다섯": 5, "여섯": 6, "일곱": 7,
    "여덟": 8, "아홉": 9, "열": 10, "스물": 20, "서른": 30, "마흔": 40, "쉰": 50,
}  # fmt: skip
_KOREAN_SINO = {"일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "칠": 7, "팔": 8, "구": 9}
_KOREAN_SINO_UNITS = {"십": 10, "백": 100}


@dataclass(frozen=True, slots=True)
class Number:
    """A number in the text and the span it was read from."""

    value: float
    start: int
    end: int


def numbers_in(text: str) -> list[Number]:
    """Every number in ``text``, in digits or in words, in the order they stand."""
    found = [_digit(m, text) for m in _DIGITS.finditer(text)]
    found += _word_numbers(text)
    found += [Number(_cjk_value(m.group()), m.start(), m.end()) for m in _CJK.finditer(text)]
    found += [Number(_korean_value(m), m.start(), m.end()) for m in _KOREAN.finditer(text)]
    found.sort(key=lambda n: n.start)
    return _percent([n for i, n in enumerate(found) if not any(o.start <= n.start < o.end for o in found[:i])], text)


def _digit(match: re.Match[str], text: str) -> Number:
    return Number(float(match.group().replace("−", "-")), match.start(), match.end())


def _percent(found: list[Number], text: str) -> list[Number]:
    out = []
    for n in found:
        percent = _PERCENT.match(text, n.end)
        out.append(Number(n.value / 100, n.start, percent.end()) if percent else n)
    return out


def _word_numbers(text: str) -> list[Number]:
    """Runs of number words, composed: tens and units add, hundreds and thousands multiply."""
    out: list[Number] = []
    words = list(_WORD.finditer(text))
    i = 0
    while i < len(words):
        total, current, start, end, j = 0, 0, -1, -1, i
        while j < len(words):
            value = _word_value(words[j].group().casefold(), text, words[j].end())
            if value is None:
                is_joiner = words[j].group().casefold() in _JOINERS and start != -1
                if (
                    is_joiner
                    and j + 1 < len(words)
                    and _word_value(words[j + 1].group().casefold(), text, words[j + 1].end()) is not None
                ):
                    j += 1
                    continue
                break
            kind, amount = value
            if kind == "multiplier":
                current = max(current, 1) * amount
                if amount >= 1000:
                    total, current = total + current, 0
            else:
                current += amount
            start = words[j].start() if start == -1 else start
            end = words[j].end()
            j += 1
        if start != -1:
            out.append(Number(float(total + current), start, end))
            i = j
        else:
            i += 1
    return out


def _word_value(word: str, text: str, end: int) -> tuple[str, int] | None:
    """The value of one word ("twenty-five" and "fünfundzwanzig" included) and whether it multiplies."""
    if word in _MULTIPLIERS and word not in _AMBIGUOUS:
        return "multiplier", _MULTIPLIERS[word]
    if word in _UNITS:
        return "add", _UNITS[word]
    if word in _TENS:
        return "add", _TENS[word]
    if word in _AMBIGUOUS:
        if not _COUNTED.match(text, end):
            return None
        return ("multiplier" if word in _MULTIPLIERS else "add"), _AMBIGUOUS[word]
    if "-" in word:  # "twenty-five", "dix-sept", "quatre-vingt-dix"
        parts = [_word_value(p, text, end) for p in word.split("-")]
        if all(p is not None and p[0] == "add" for p in parts) and parts:
            if word.startswith("quatre-vingt"):
                return "add", 80 + sum(p[1] for p in parts[2:] if p is not None)
            return "add", sum(p[1] for p in parts if p is not None)
        return None
    for joiner in ("und", "ën", "en"):  # de/nl: "fünfundzwanzig" = 5 and 20, "vijfentwintig"
        unit, sep, ten = word.partition(joiner)
        if sep and unit in _UNITS and ten in _TENS:
            return "add", _UNITS[unit] + _TENS[ten]
    return None


def _cjk_value(numeral: str) -> float:
    total, current = 0, 0
    for ch in numeral:
        if ch in _CJK_DIGITS:
            current = _CJK_DIGITS[ch]
        else:
            unit = _CJK_UNITS[ch]
            total += max(current, 1) * unit if unit < 10000 else 0
            if unit == 10000:
                total = (total + current) * unit
            current = 0
    return float(total + current)


def _korean_value(match: re.Match[str]) -> float:
    if match.group("native"):
        return float(_KOREAN_NATIVE[match.group("native")])
    total, current = 0, 0
    for ch in match.group("sino"):
        if ch in _KOREAN_SINO:
            current = _KOREAN_SINO[ch]
        else:
            total += max(current, 1) * _KOREAN_SINO_UNITS[ch]
            current = 0
    return float(total + current)
