"""Input cases from a spec, and the binary file both drivers read and write.

File format (native little-endian), one record per argument in order, then the function
result if any::

    int64 ndim, int64 lbound[ndim], int64 ubound[ndim], int64 type code, int64 nbytes,
    nbytes of raw data in Fortran (column-major) order

Outputs (``intent(out)`` arguments and the function result) are poisoned before the
call: NaN for reals and complex, -123456789 for integers, 123 for logicals (neither
.true. nor .false.), '?' for characters; an element the original writes and the port
leaves alone is then caught.
"""
from __future__ import annotations

import io
import itertools
import math
import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from ..fortran import ir
from .constraints import element_name
from .extents import Ranges
from .spec import Spec, dim_parts, eval_expr
from .strlen import result_length
from ..fortran.strings import string_result

INT_POISON = -123456789
LOGICAL_POISON = 123
CHAR_POISON = b"?"

# type code -> (numpy dtype, description)
TYPE_CODES = {
    1: ("<i4", "integer(4)"), 2: ("<i8", "integer(8)"), 3: ("<f4", "real(4)"), 4: ("<f8", "real(8)"),
    5: ("<c8", "complex(4)"), 6: ("<c16", "complex(8)"), 7: ("<i4", "logical(4)"), 8: ("S1", "character"),
    9: ("<i2", "integer(2)"), 10: ("<i1", "integer(1)"), 11: ("<i1", "logical(1)"), 12: ("<i8", "logical(8)"),
}


def type_code(t: ir.FType) -> int:
    key = (t.base, t.kind)
    codes = {("integer", 4): 1, ("integer", 8): 2, ("real", 4): 3, ("real", 8): 4, ("complex", 4): 5,
             ("complex", 8): 6, ("logical", 4): 7, ("integer", 2): 9, ("integer", 1): 10,
             ("logical", 1): 11, ("logical", 8): 12}
    if t.base == "character":
        return 8
    if key not in codes:
        raise ValueError(f"type {t} is not supported by the harness")
    return codes[key]


def dtype_of(t: ir.FType) -> np.dtype:
    code = type_code(t)
    if code == 8:
        return np.dtype(f"S{t.char_len or 1}")
    return np.dtype(TYPE_CODES[code][0])


@dataclass
class Record:
    name: str
    code: int
    lbound: tuple[int, ...]
    data: np.ndarray  # Fortran-ordered; 0-d for scalars

    @property
    def ubound(self) -> tuple[int, ...]:
        return tuple(lb + n - 1 for lb, n in zip(self.lbound, self.data.shape))


@dataclass
class ArrayLayout:
    lbound: tuple[int, ...]
    ubound: tuple[int, ...]
    itemsize: int

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(max(0, u - l + 1) for l, u in zip(self.lbound, self.ubound))

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.itemsize


@dataclass
class Layout:
    scalars: dict[str, Any]  # values of every scalar argument (sizes, strides, flags, ...)
    arrays: dict[str, ArrayLayout]
    pointer_values: dict[str, np.ndarray] = field(default_factory=dict)
    index_ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    # segments: the start array's and the count array's values, by name (draw_segments)
    segment_values: dict[str, np.ndarray] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class Case:
    seed: int
    sizes: dict[str, int]
    choices: dict[str, Any]
    kind: str = ""  # '' (the spec's correctness sets), 'cross-tiles' or 'timing-size'

    def label(self) -> str:
        parts = [f"{k}={v}" for k, v in {**self.sizes, **self.choices}.items()]
        return f"seed={self.seed} " + " ".join(parts) + (f" [{self.kind}]" if self.kind else "")


def cycled_args(spec: Spec) -> list[str]:
    """Arguments whose ``values`` are cycled over the cases: strides, and integer scalars
    given values (ints or expressions of the sizes: the values that select a loop's
    versions); a logical's values are drawn at random instead."""
    return [n for n, a in spec.args.items()
            if a.role == "stride" or (a.role == "scalar" and a.values and not any(isinstance(v, bool) for v in a.values))]


def cycled_values(spec: Spec) -> list[tuple[str, list]]:
    """(name, values) of everything cycled over the cases: the :func:`cycled_args`, then the
    single elements an integer array's spec gives values (``elements``), named as the
    constraints name them ('grid_points(1)')."""
    out = [(n, spec.args[n].values) for n in cycled_args(spec)]
    for n, a in spec.args.items():
        for subs, vals in (a.elements or {}).items():
            out.append((element_name(n, subs.split(",")), vals))
    return out


def choice_value(v: Any, sizes: dict[str, int]) -> Any:
    """A cycled value for one size set: ints as they are, expressions (``n + 1``) evaluated."""
    if isinstance(v, str):
        try:
            return eval_expr(v, sizes)
        except ValueError:
            return v
    return v


def cases(spec: Spec, base_seed: int, size_sets: Optional[list[dict[str, int]]] = None,
          kind: str = "") -> list[Case]:
    """Every flag value combination for every size set; strides and integer scalars with
    values cycled over the cases, and each of their values used at least once with sizes
    past the smallest (a version that a stride or an offset selects needs iterations).
    ``kind`` labels the cases."""
    size_sets = size_sets if size_sets is not None else spec.correctness
    flags = [(n, a.values) for n, a in spec.args.items() if a.role == "flag"]
    strides = cycled_values(spec)
    combos = list(itertools.product(*[v for _, v in flags])) or [()]
    out: list[Case] = []
    used: set[tuple[str, int]] = set()
    small = min((sum(s.values()) for s in size_sets), default=0)
    k = 0
    for sizes in size_sets:
        for combo in combos:
            ch: dict[str, Any] = {n: v for (n, _), v in zip(flags, combo)}
            for j, (n, vals) in enumerate(strides):
                pick = (k + j * (k // max(1, len(vals)))) % len(vals)
                ch[n] = choice_value(vals[pick], sizes)
                if sum(sizes.values()) > small or len(size_sets) == 1:
                    used.add((n, pick))
            out.append(Case(seed=(base_seed + 7919 * k) % (2**31 - 1), sizes=dict(sizes), choices=ch, kind=kind))
            k += 1
    bigger = [s for s in size_sets if sum(s.values()) > small] or list(size_sets)
    for n, vals in strides:
        for pick in range(len(vals)):
            if (n, pick) in used or not bigger:
                continue
            sizes = bigger[k % len(bigger)]
            ch = {m: v[0] for m, v in flags}
            for m, mvals in strides:
                mpick = pick if m == n else 0
                ch[m] = choice_value(mvals[mpick], sizes)
                used.add((m, mpick))
            out.append(Case(seed=(base_seed + 7919 * k) % (2**31 - 1), sizes=dict(sizes), choices=ch, kind=kind))
            k += 1
    return out


def layout(kernel: ir.Kernel, spec: Spec, sizes: dict[str, int], choices: Optional[dict] = None,
           rng: Optional[np.random.Generator] = None, choice_index: int = 0) -> Layout:
    """Scalar values and array bounds for one case (``rng`` None: the largest choices)."""
    env, ints = scalar_env(kernel, spec, sizes, choices, rng, choice_index)
    lay = Layout(scalars=env, arrays={})
    array_values: dict[str, tuple[int, int]] = {}
    for n, a in spec.args.items():
        if a.role == "pointer":
            rows = max(0, eval_expr(a.rows, ints, f"args.{n}.rows"))
            if a.nnz and a.nnz != "auto":
                nnz = ints[a.nnz]
                if rng is None:
                    counts = np.full(rows, nnz // max(rows, 1), dtype=np.int64)
                    if rows:
                        counts[-1] += nnz - counts.sum()
                else:
                    counts = rng.multinomial(nnz, [1.0 / rows] * rows) if rows else np.zeros(0, np.int64)
            else:
                lo, hi = a.per_row
                counts = (np.full(rows, hi, dtype=np.int64) if rng is None
                          else rng.integers(lo, hi + 1, size=rows))
            ptr = np.concatenate([[1], 1 + np.cumsum(counts)]).astype(np.int64)
            lay.pointer_values[n] = ptr
            array_values[n] = (1, int(ptr[-1]))
            ints[f"nnz_{n}"] = int(ptr[-1]) - 1
    for n, a in spec.args.items():
        if a.role == "segments":
            starts, counts = draw_segments(n, a, ints, rng)
            lay.segment_values[n], lay.segment_values[a.count] = starts, counts
            array_values[n] = (int(starts.min(initial=1)), int(starts.max(initial=1)))
            array_values[a.count] = (int(counts.min(initial=0)), int(counts.max(initial=0)))
        if a.role == "index":
            lo = eval_expr(a.range[0], ints, f"args.{n}.range")
            hi = eval_expr(a.range[1], ints, f"args.{n}.range")
            lay.index_ranges[n] = (lo, max(lo, hi))
            array_values[n] = (lo, max(lo, hi))
    ranges: Optional[Ranges] = None
    for a in kernel.args:
        s = spec.args[a.name]
        if not a.rank:
            continue
        lbs, ubs = [], []
        for k, d in enumerate(s.dims):
            lo_t, hi_t = dim_parts(d)
            if lo_t == "auto":  # an allocatable module array: from its smallest subscript
                if ranges is None:
                    ranges = Ranges(kernel, ints, array_values)
                least = ranges.min_subscripts(a.name, a.rank)[k]
                lo = least if least is not None else 1
            else:
                lo = eval_expr(lo_t, ints, f"args.{a.name}.dims[{k}]")
            if hi_t == "auto":
                if s.role == "pointer" and a.rank == 1:
                    hi = lo + len(lay.pointer_values[a.name]) - 1
                else:
                    if ranges is None:
                        ranges = Ranges(kernel, ints, array_values)
                    hi = _auto_upper(kernel, a, k, ranges, ints, lay)
            else:
                hi = eval_expr(hi_t, ints, f"args.{a.name}.dims[{k}]")
            lbs.append(lo)
            ubs.append(max(lo - 1, hi))
        lay.arrays[a.name] = ArrayLayout(tuple(lbs), tuple(ubs), dtype_of(a.ftype).itemsize)
    return lay


def draw_segments(name: str, a, ints: dict[str, int], rng: Optional[np.random.Generator]) -> tuple:
    """(starts, counts) of a 'segments' argument: ``items`` lengths drawn in ``per_item``
    (``rng`` None: the most), at least one non-zero; scaled down when they overflow
    ``total``; the disjoint segments laid out from 1 in a random order (the order of the items
    in a drawn permutation)."""
    items = max(0, eval_expr(a.items, ints, f"args.{name}.items"))
    total = eval_expr(a.total, ints, f"args.{name}.total")
    lo, hi = a.per_item
    if rng is None:
        counts = np.full(items, hi, dtype=np.int64)
    else:
        counts = rng.integers(lo, hi + 1, size=items).astype(np.int64)
        if items and hi > 0 and not counts.any():
            counts[rng.integers(0, items)] = max(lo, 1)
    if counts.sum() > total:
        if items * lo > total:
            raise ValueError(f"args.{name}: {items} segments of at least {lo} entries (per_item) do not fit "
                             f"total = {a.total} = {total}")
        counts = np.maximum(lo, counts * total // counts.sum())
        while counts.sum() > total:  # what raising lengths to per_item[0] added
            counts[np.argmax(counts)] -= 1
    order = rng.permutation(items) if rng is not None else np.arange(items)
    starts = np.empty(items, dtype=np.int64)
    starts[order] = 1 + np.cumsum(counts[order]) - counts[order]
    return starts, counts


def scalar_env(kernel: ir.Kernel, spec: Spec, sizes: dict[str, int], choices: Optional[dict] = None,
               rng: Optional[np.random.Generator] = None, choice_index: int = 0) -> tuple[dict, dict[str, int]]:
    """(every scalar argument's value, the integer ones) for one case: sizes, flag and
    cycled choices, leading dimensions, scalars (``rng`` None: the top of their range)."""
    if choices is None:
        choices = {n: a.values[min(choice_index, len(a.values) - 1)] for n, a in spec.args.items()
                   if a.role == "flag"}
        choices.update({n: choice_value(vals[min(choice_index, len(vals) - 1)], sizes)
                        for n, vals in cycled_values(spec)})
    env: dict[str, Any] = {}
    for n, a in spec.args.items():
        if a.role == "size":
            env[n] = int(sizes[n])
        elif a.role in ("flag", "stride"):
            env[n] = choices[n]
    # the routine's integer named constants (PARAMETERs of its own, of an INCLUDEd file or of
    # a module): declared extents are written in them (Nekbone's 'lx1*ly1*lz1*lelt')
    ints = {n: v.parameter for n, v in {**kernel.module_vars, **kernel.locals}.items()
            if isinstance(v.parameter, int) and not isinstance(v.parameter, bool)}
    ints.update({n: v for n, v in env.items() if isinstance(v, int)})
    for n, a in spec.args.items():
        if a.role == "leading-dim":
            ints[n] = env[n] = max(1, eval_expr(a.rows, ints, f"args.{n}.rows") + a.pad)
    cycled = set(cycled_args(spec))
    for n, a in spec.args.items():
        if a.role == "scalar":
            if n in choices:
                env[n] = choice_value(choices[n], sizes)
            elif n in cycled:  # not chosen by the caller: the first value (the one timed)
                env[n] = choice_value(a.values[0], sizes)
            else:
                env[n] = _scalar_value(kernel.arg(n), a, rng, _bounds(kernel, n, a, ints))
            if isinstance(env[n], (int, np.integer)) and not isinstance(env[n], (bool, np.bool_)):
                ints[n] = int(env[n])
    from .constraints import equal_reals
    for a, b in equal_reals(kernel):  # an error exit when they differ (a clock read twice)
        if a in env and b in env and getattr(spec.args.get(b), "role", None) == "scalar" and b not in choices:
            env[b] = env[a]
    return env, ints


class UnknownExtent(ValueError):
    """An ``auto`` array extent no analysis can bound (the array is passed to a routine that
    may touch past what the kernel's subscripts show): inputs would be a guess, and a
    routine writing past a guessed allocation proves nothing (reason ``unknown-extent``)."""

    code = "unknown-extent"


def _auto_upper(kernel, a: ir.Argument, k: int, ranges: Ranges, ints: dict, lay: Layout) -> int:
    mine = ranges.max_subscripts(a.name, a.rank)[k]
    theirs = None
    if k < len(a.access_bounds) and a.access_bounds[k] is not None:
        try:
            theirs = int(ir.evaluate(a.access_bounds[k][1], ints))
        except (KeyError, ValueError, TypeError, ZeroDivisionError):
            theirs = None
    if mine is None and theirs is None and a.name in ranges.passed_to:
        callee, line = ranges.passed_to[a.name]
        raise UnknownExtent(
            f"the extent of '{a.name}' (dimension {k + 1}) cannot be bounded: it is passed to {callee} "
            f"(line {line}), which may touch elements past the ones its subscripts here show; give it in the "
            f"spec (args.{a.name}.dims) or in the run configuration (routines.{kernel.name}.args.{a.name}.extent)")
    if mine is None and theirs is None:
        big = max([abs(v) for v in ints.values()] + [1])
        steps = max([abs(v) for n, v in ints.items() if n.startswith("inc")] + [1])
        lay.notes.append(f"{a.name}: could not bound dim {k + 1}; allocated {big * steps + 1} (set dims in the spec)")
        return big * steps + 1
    # at least one element: a port may wrap (and copy) the array even when no element is used
    return max([x for x in (mine, theirs) if x is not None] + [a_lower(a, k, ints)])


def a_lower(a: ir.Argument, k: int, ints: dict) -> int:
    d = a.dims[k]
    if d.lower is None and d.upper is None:  # deferred shape (an allocatable module array)
        return 1
    try:
        return int(ir.evaluate(d.lower, ints)) if d.lower is not None else 1
    except (KeyError, ValueError, TypeError):
        return 1


def _bounds(kernel: ir.Kernel, name: str, s, ints: dict) -> Optional[tuple]:
    """What the kernel's orderings (harness.constraints) allow an integer scalar drawn from
    a range, given the sizes and the scalars drawn before it."""
    if s.values is not None or s.range is None or kernel.arg(name).ftype.base != "integer":
        return None
    from .constraints import scalar_bounds
    lo, hi = scalar_bounds(kernel, name, ints)
    return None if lo is None and hi is None else (lo, hi)


def _within(lo: int, hi: int, bounds: tuple) -> tuple[int, int]:
    """[lo, hi] cut to what the orderings allow; when the two do not meet, the allowed
    value nearest the range (the code's word before the default range); when the orderings
    contradict each other, the range as it is."""
    blo = lo if bounds[0] is None else bounds[0]
    bhi = hi if bounds[1] is None else bounds[1]
    if blo > bhi:
        return lo, hi
    a, b = max(lo, blo), min(hi, bhi)
    if a <= b:
        return a, b
    v = blo if blo > hi else bhi
    return v, v


#: the characters a string is drawn from: both cases, digits, blanks, signs (case conversion,
#: integer parsing, blank trimming and substring matches all take both branches)
STRING_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789    +-.az"


def draw_string(char_len: Optional[int], rng, lengths) -> str:
    """A CHARACTER string: ``char_len`` characters, or (``len=*``) a length in ``lengths``
    ([lo, hi]; the largest without ``rng``, as for the timing case)."""
    lo, hi = (int(lengths[0]), int(lengths[1])) if lengths else (1, 24)
    n = char_len if char_len is not None else (hi if rng is None else int(rng.integers(max(lo, 1), max(hi, 1) + 1)))
    if rng is None:
        return "".join(STRING_ALPHABET[(7 * i) % len(STRING_ALPHABET)] for i in range(n))
    return "".join(STRING_ALPHABET[int(k)] for k in rng.integers(0, len(STRING_ALPHABET), size=n))


def _scalar_value(arg: ir.Argument, s, rng, bounds: Optional[tuple] = None):
    t = arg.ftype.base
    if t == "character" and arg.ftype.char_len != 1 and s.values is None:
        return draw_string(arg.ftype.char_len, rng, s.range)
    if s.values is not None:
        return s.values[0] if rng is None else s.values[int(rng.integers(0, len(s.values)))]
    if s.range is None:
        return 0
    lo, hi = s.range
    if t == "integer" and bounds is not None:
        lo, hi = _within(int(lo), int(hi), bounds)
    if t == "integer":
        return int(hi) if rng is None else int(rng.integers(int(lo), int(hi) + 1))
    if rng is None:
        return float(hi)
    if t == "complex":
        return complex(rng.uniform(lo, hi), rng.uniform(lo, hi))
    return float(rng.uniform(lo, hi))


#: array data one case may take (inputs and outputs together): a draw beyond it is refused
#: before anything is allocated (an exponent drawn into a bound, ``nl**ndim``, would ask
#: for petabytes) and the harness draws again
MAX_CASE_BYTES = 1 << 30


class InputsTooLarge(ValueError):
    """The arrays of a draw would take more than :data:`MAX_CASE_BYTES` (reason
    ``inputs-too-large`` when every draw does: the port is not at fault)."""

    code = "inputs-too-large"


def make_inputs(kernel: ir.Kernel, spec: Spec, case: Case) -> tuple[list[Record], Layout]:
    """The input records of one case (outputs poisoned). Raises :class:`InputsTooLarge`
    before allocating when the arrays would not fit :data:`MAX_CASE_BYTES`."""
    rng = np.random.default_rng(case.seed)
    lay = layout(kernel, spec, case.sizes, case.choices, rng)
    sizes = {a.name: math.prod(lay.arrays[a.name].shape) * dtype_of(a.ftype).itemsize
             for a in kernel.args if a.rank and a.name in lay.arrays}
    if sum(sizes.values()) > MAX_CASE_BYTES:
        big = sorted(sizes.items(), key=lambda kv: -kv[1])[0][0]
        scal = ", ".join(f"{n}={v}" for n, v in lay.scalars.items() if isinstance(v, int) and not isinstance(v, bool))
        raise InputsTooLarge(f"the arrays would take {_bytes(sum(sizes.values()))} (most of it {big}, shape "
                             f"{tuple(lay.arrays[big].shape)}) with {scal or 'these sizes'}")
    recs: list[Record] = []
    for a in kernel.args:
        s = spec.args[a.name]
        code = type_code(a.ftype)
        dt = dtype_of(a.ftype)
        poison = s.intent == "out"
        if not a.rank:
            v = lay.scalars[a.name]
            if a.ftype.base == "character":  # its own length (len=*: the one drawn)
                dt = np.dtype(f"S{max(1, a.ftype.char_len or len(str(v)))}")
            if poison:
                data = _poison(a.ftype, dt, ())
            else:
                data = _scalar_array(a.ftype, dt, v)
            recs.append(Record(a.name, code, (), data))
            continue
        al = lay.arrays[a.name]
        shape = al.shape
        if poison:
            data = _poison(a.ftype, dt, shape)
        elif s.role == "pointer":
            ptr = lay.pointer_values[a.name]
            data = np.full(shape, ptr[-1], dtype=dt)
            m = min(len(ptr), data.size)
            data.reshape(-1, order="F")[:m] = ptr[:m]
        elif s.role in ("segments", "counts"):  # beyond the items: empty segments at 1
            vals = lay.segment_values[a.name]
            data = np.full(shape, 1 if s.role == "segments" else 0, dtype=dt)
            m = min(len(vals), data.size)
            data.reshape(-1, order="F")[:m] = vals[:m]
        elif s.role == "index":
            lo, hi = lay.index_ranges[a.name]
            data = (_distinct(lo, hi, shape, rng) if s.distinct else rng.integers(lo, hi + 1, size=shape)).astype(dt)
        else:
            data = _random(a.ftype, dt, shape, s, rng)
            _set_elements(data, a.name, s, al.lbound, case.choices)
        recs.append(Record(a.name, code, al.lbound, np.asfortranarray(data)))
    if kernel.result is not None:
        dt = dtype_of(kernel.result.ftype)
        if string_result(kernel) is not None:  # as long as the caller makes it (harness/strlen.py)
            dt = np.dtype(f"S{max(1, result_length(kernel, _string_values(kernel, lay.scalars)))}")
        recs.append(Record("result", type_code(kernel.result.ftype), (), _poison(kernel.result.ftype, dt, ())))
    return recs, lay


def _distinct(lo: int, hi: int, shape: tuple, rng) -> np.ndarray:
    """Integers in [lo, hi], none repeated: the first elements of a random permutation of
    the range (all of it where the array spans it); an array longer than the range repeats
    permutations (it cannot be distinct)."""
    span = hi - lo + 1
    size = int(np.prod(shape, dtype=np.int64))
    if size <= span:  # without building the whole range (a wide one stays cheap)
        vals = rng.choice(span, size=size, replace=False)
    else:  # one permutation per row, as many rows as it takes
        vals = np.argsort(rng.random((-(-size // span), span)), axis=1).ravel()[:size]
    return (lo + vals).reshape(shape, order="F")


def _set_elements(data: np.ndarray, name: str, s, lbound, choices: dict) -> None:
    """The elements the spec gives values (``elements``): the case's choice, else the first
    value (the one timed); an element outside the array is left as drawn."""
    for subs, vals in (s.elements or {}).items():
        idx = tuple(int(x) - int(lb) for x, lb in zip(subs.split(","), lbound))
        if len(idx) != data.ndim or any(i < 0 or i >= n for i, n in zip(idx, data.shape)):
            continue
        data[idx] = choices.get(element_name(name, subs.split(",")), vals[0])


def _string_values(kernel: ir.Kernel, scalars: dict) -> dict:
    """The scalar arguments' values, a string dummy's as the caller passes it (blank padded
    to its declared length)."""
    out = dict(scalars)
    for a in kernel.args:
        if not a.rank and a.ftype.base == "character" and a.name in out:
            v = str(out[a.name])
            out[a.name] = v.ljust(a.ftype.char_len)[: a.ftype.char_len] if a.ftype.char_len else v
    return out


def _bytes(n: int) -> str:
    for unit, f in (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= f:
            return f"{n / f:.3g} {unit}"
    return f"{n} bytes"


def _scalar_array(t: ir.FType, dt: np.dtype, v) -> np.ndarray:
    if t.base == "character":
        return np.array(str(v).encode().ljust(dt.itemsize)[: dt.itemsize], dtype=dt)
    if t.base == "logical":
        return np.array(1 if v else 0, dtype=dt)
    return np.array(v, dtype=dt)


def _poison(t: ir.FType, dt: np.dtype, shape) -> np.ndarray:
    if t.base in ("real", "complex"):
        return np.full(shape, np.nan, dtype=dt)
    if t.base == "integer":
        return np.full(shape, INT_POISON if dt.itemsize >= 4 else -123, dtype=dt)
    if t.base == "logical":
        return np.full(shape, LOGICAL_POISON, dtype=dt)
    return np.full(shape, CHAR_POISON * dt.itemsize, dtype=dt)


def _random(t: ir.FType, dt: np.dtype, shape, s, rng) -> np.ndarray:
    if t.base == "character" and s.values is None:  # each element a string of printable ASCII
        codes = np.frombuffer(STRING_ALPHABET.encode(), dtype=np.uint8)
        n = math.prod(shape) if shape else 1
        raw = codes[rng.integers(0, len(codes), size=n * dt.itemsize)].tobytes()
        return np.frombuffer(raw, dtype=dt).reshape(shape).copy()
    if s.values is not None:
        vals = s.values
        if t.base == "logical":
            return np.array(rng.choice([1 if v else 0 for v in vals], size=shape), dtype=dt)
        if t.base == "character":
            return np.array(rng.choice([str(v).encode() for v in vals], size=shape), dtype=dt)
        return np.array(rng.choice(vals, size=shape), dtype=dt)
    lo, hi = s.range
    if t.base == "integer":
        return rng.integers(int(lo), int(hi) + 1, size=shape).astype(dt)
    if t.base == "complex":
        return (rng.uniform(lo, hi, size=shape) + 1j * rng.uniform(lo, hi, size=shape)).astype(dt)
    return rng.uniform(lo, hi, size=shape).astype(dt)


# --------------------------------------------------------------------------- file format


def write_records(path: Path, recs: list[Record]) -> None:
    buf = io.BytesIO()
    for r in recs:
        nd = r.data.ndim
        raw = r.data.tobytes(order="F")
        buf.write(struct.pack("<q", nd))
        buf.write(struct.pack(f"<{nd}q", *r.lbound))
        buf.write(struct.pack(f"<{nd}q", *r.ubound))
        buf.write(struct.pack("<qq", r.code, len(raw)))
        buf.write(raw)
    Path(path).write_bytes(buf.getvalue())


MMAP_BYTES = 64 * 2**20  # files larger than this are mapped, not read: outputs at timing sizes


def read_records(path: Path, names: list[str], char_lens: Optional[dict[str, int]] = None) -> list[Record]:
    """Read records (named in order by ``names``). Raises ValueError on a malformed file.
    A large file is memory-mapped (read-only arrays; the pages are read as they are
    compared, and the mapping outlives an unlinked file)."""
    path = Path(path)
    if path.stat().st_size > MMAP_BYTES:
        with open(path, "rb") as fh:
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    else:
        data = path.read_bytes()
    pos = 0
    out: list[Record] = []

    def take(n: int) -> bytes:
        nonlocal pos
        if pos + n > len(data):
            raise ValueError(f"{Path(path).name}: truncated at byte {pos} (wanted {n} more)")
        b = data[pos:pos + n]
        pos += n
        return b

    for name in names:
        (nd,) = struct.unpack("<q", take(8))
        if not 0 <= nd <= 15:
            raise ValueError(f"{Path(path).name}: record {name!r}: bad rank {nd}")
        lb = struct.unpack(f"<{nd}q", take(8 * nd))
        ub = struct.unpack(f"<{nd}q", take(8 * nd))
        code, nbytes = struct.unpack("<qq", take(16))
        if code not in TYPE_CODES:
            raise ValueError(f"{Path(path).name}: record {name!r}: bad type code {code}")
        shape = tuple(max(0, u - l + 1) for l, u in zip(lb, ub))
        if nbytes < 0 or pos + nbytes > len(data):
            raise ValueError(f"{Path(path).name}: truncated at byte {pos} (wanted {nbytes} more)")
        if code == 8:
            n = int(np.prod(shape, dtype=np.int64)) if nd else 1
            itemsize = nbytes // max(n, 1) if n else 1
            dt = np.dtype(f"S{max(itemsize, 1)}")
        else:
            dt = np.dtype(TYPE_CODES[code][0])
        n = int(np.prod(shape, dtype=np.int64)) if nd else 1
        if nbytes != n * dt.itemsize:
            bounds = ", ".join(f"{l}:{u}" for l, u in zip(lb, ub))
            raise ValueError(f"{Path(path).name}: record {name!r}: the header says {n} element(s) "
                             f"({bounds or 'scalar'}) of {dt.itemsize} byte(s) but {nbytes} bytes follow: the program "
                             "that wrote it corrupted it (a port writing outside its arguments?)")
        # a view into the file's bytes (no copy: outputs at timing sizes are large)
        arr = (np.frombuffer(data, dtype=dt, count=n, offset=pos) if nbytes
               else np.zeros(0, dtype=dt))
        pos += nbytes
        arr = arr.reshape(shape, order="F") if nd else arr.reshape(())
        out.append(Record(name, code, tuple(lb), arr))
    return out
