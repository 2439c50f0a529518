"""Output compared as numbers (pure): a program's or a routine's printed text, line by
line, the same text and every number within a tolerance set by its magnitude (``rtol``
times the larger of the two values, plus one unit of the last digit printed, since a value
printed with 6 digits can differ by one in the last when a parallel sum rounds the other
way); the numbers another run of the same original prints differently (its timings) as a
mask. Used by the program proof (``program_proof``), the application proof and the
routine proof's printed output (``printed``)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

# a number as Fortran prints it: 12, -3.5, .5, 1.0E+03, 1.0D-05, 0.1234-100 (3-digit exponent, no letter)
_NUMBER = re.compile(r"(?<![\w.])([-+]?(?:\d+\.\d*|\.\d+|\d+))(?:([eEdD])([-+]?\d+)|([-+]\d{3}))?(?![\w.])")
DEFAULT_RTOL = 1e-9


@dataclass
class Token:
    text: str
    value: Optional[float] = None  # None: text
    unit: float = 0.0  # one unit of the last digit printed (0 for integers: exact)


def tokens(line: str) -> list[Token]:
    """The line as text pieces and numbers (whitespace runs collapsed in the text)."""
    out: list[Token] = []
    pos = 0
    for m in _NUMBER.finditer(line):
        if m.start() > pos:
            out.append(Token(" ".join(line[pos:m.start()].split())))
        mant, exp = m.group(1), m.group(3) or m.group(4)
        e = int(exp) if exp else 0
        if "." in mant or exp:
            decimals = len(mant.split(".", 1)[1]) if "." in mant else 0
            out.append(Token(m.group(0), float(mant) * 10.0 ** e, 10.0 ** (e - decimals)))
        else:
            out.append(Token(m.group(0), float(int(mant)), 0.0))
        pos = m.end()
    if pos < len(line):
        out.append(Token(" ".join(line[pos:].split())))
    return [t for t in out if t.value is not None or t.text]


@dataclass
class OutputComparison:
    matched: bool
    lines_compared: int = 0
    numbers_compared: int = 0
    max_rel_err: float = 0.0
    first_difference: Optional[dict] = None  # {line_ref, line_new, ref, new, why}
    ignored: int = 0  # lines left out by the ignore patterns (both outputs)
    masked: int = 0  # numbers left out as timings (:func:`timing_mask`)

    def describe(self) -> str:
        if self.matched:
            timed = f"; {self.masked} numbers that change with the original's speed left out" if self.masked else ""
            return (f"outputs agree: {self.lines_compared} lines, {self.numbers_compared} numbers "
                    f"(max rel err {self.max_rel_err:.2g}; {self.ignored} lines ignored{timed})")
        d = self.first_difference or {}
        return (f"outputs differ at line {d.get('line_ref')} of the original / {d.get('line_new')} of the modern "
                f"program ({d.get('why')}): {d.get('ref')!r} vs {d.get('new')!r}")


def _kept(text: str, pats) -> list[tuple[int, str]]:
    """(line number, line) of the non-blank lines no ignore pattern matches."""
    return [(i, ln) for i, ln in enumerate(text.splitlines(), 1)
            if ln.strip() and not any(p.search(ln) for p in pats)]


def _close(x: Token, y: Token, rtol: float, atol: float) -> bool:
    if x.unit == 0.0 and y.unit == 0.0:
        return x.value == y.value
    return abs(x.value - y.value) <= atol + rtol * max(abs(x.value), abs(y.value)) + max(x.unit, y.unit) * 1.0000001


def compare_output(ref: str, new: str, ignore: Sequence[str] = (), rtol: float = DEFAULT_RTOL,
                   atol: float = 0.0, mask: frozenset = frozenset()) -> OutputComparison:
    """Line by line: same text, numbers within ``atol`` + ``rtol`` x magnitude + one unit of
    the last digit printed (``atol``: for numbers that are rounding noise by nature, such as a
    conservation error near 1e-14). Lines matching a regex of ``ignore`` are dropped from both
    first. ``mask`` (:func:`timing_mask`): (kept line, number) positions whose values are not
    compared, only that a number stands there (timings)."""
    pats = [re.compile(p) for p in ignore]
    a, b = _kept(ref, pats), _kept(new, pats)
    ignored = sum(1 for ln in ref.splitlines() if ln.strip()) - len(a) + \
        sum(1 for ln in new.splitlines() if ln.strip()) - len(b)
    res = OutputComparison(True, ignored=ignored)

    def differ(i, ra, nb, why):
        res.matched = False
        res.first_difference = {"line_ref": ra[0] if ra else None, "line_new": nb[0] if nb else None,
                                "ref": ra[1] if ra else "", "new": nb[1] if nb else "", "why": why}
        return res

    for k in range(max(len(a), len(b))):
        if k >= len(a) or k >= len(b):
            return differ(k, a[k] if k < len(a) else None, b[k] if k < len(b) else None,
                          "one program printed more lines")
        ta, tb = tokens(a[k][1]), tokens(b[k][1])
        res.lines_compared += 1
        if len(ta) != len(tb):
            return differ(k, a[k], b[k], "different text")
        q = -1
        for x, y in zip(ta, tb):
            if (x.value is None) != (y.value is None):
                return differ(k, a[k], b[k], "different text")
            if x.value is None:
                if x.text != y.text:
                    return differ(k, a[k], b[k], "different text")
                continue
            q += 1
            if (k, q) in mask:
                res.masked += 1
                continue
            res.numbers_compared += 1
            if x.unit == 0.0 and y.unit == 0.0:
                if x.value != y.value:
                    return differ(k, a[k], b[k], f"integer {x.text} vs {y.text}")
                continue
            mag = max(abs(x.value), abs(y.value))
            err = abs(x.value - y.value)
            if err > atol + rtol * mag + max(x.unit, y.unit) * 1.0000001:
                return differ(k, a[k], b[k], f"{x.text} vs {y.text}: difference {err:.3g} beyond the tolerance")
            if mag > 0:
                res.max_rel_err = max(res.max_rel_err, err / mag)
    return res


def timing_mask(ref: str, slow: str, ignore: Sequence[str] = (), rtol: float = DEFAULT_RTOL,
                atol: float = 0.0) -> frozenset:
    """The numbers of ``ref`` that another build of the same original, much slower (``-O0``),
    printed differently although its lines are the same: the program's timings (a rate, the
    seconds a benchmark loop took), which no port reproduces, as (kept line, number)
    positions for :func:`compare_output`'s mask. Empty when the outputs differ in shape (a
    line more, other text): then nothing is left out."""
    pats = [re.compile(p) for p in ignore]
    a, b = _kept(ref, pats), _kept(slow, pats)
    if len(a) != len(b):
        return frozenset()
    out = set()
    for k, (la, lb) in enumerate(zip(a, b)):
        ta, tb = tokens(la[1]), tokens(lb[1])
        if len(ta) != len(tb) or any((x.value is None) != (y.value is None) or (x.value is None and x.text != y.text)
                                     for x, y in zip(ta, tb)):
            return frozenset()
        nums = [(x, y) for x, y in zip(ta, tb) if x.value is not None]
        out |= {(k, q) for q, (x, y) in enumerate(nums) if not _close(x, y, rtol, atol)}
    return frozenset(out)
