"""The harness spec: how to make inputs for one kernel, which sizes to run, what tolerance
each output gets: the data model, its expressions, and its YAML file (``<kernel>.spec.yaml``,
commented, for users to refine; validated when read back; the file records a hash of
what was inferred, so an edited file is told apart from a stale one). Inference from the
IR, and the choice between an edited file and a fresh inference, are in
:mod:`.infer`.
"""
from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml

from ..errors import UserError
from ..fortran import ir
from . import ir_facts

SPEC_VERSION = 1
ROLES = ("size", "scalar", "stride", "flag", "leading-dim", "array", "pointer", "index", "segments", "counts")
CORRECTNESS_SIZES = (1, 7, 33)
TIMING_BYTES = 64 * 2**20  # array data for timing: well past the last-level cache
TIMING_MAX_EXTENT = 1 << 28
TIMING_FLOPS = 2e8  # cap on the estimated floating-point work of one timed call (a naive nest: ~0.1-1 s)

TOL = {  # (relative tolerance) by real kind
    8: 1e-12,
    4: 1e-5,
}



class _SpecLoader(yaml.SafeLoader):
    """YAML 1.1's safe loader with booleans only spelled true/false (YAML 1.2): a Fortran
    argument named ``on``, ``off``, ``yes`` or ``no`` stays a name, not a boolean key."""


_SpecLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:bool"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_SpecLoader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                  list("tTfF"))


def load_spec_yaml(text: str):
    """A spec file's YAML (``yaml.YAMLError`` on bad YAML)."""
    return yaml.load(text, Loader=_SpecLoader)

@dataclass
class ArgSpec:
    role: str
    intent: str = "in"
    values: Optional[list] = None  # stride/flag/logical choices
    range: Optional[list] = None  # [lo, hi] numbers (scalar/array) or expressions (index)
    dims: Optional[list[str]] = None  # 'lo:hi' per dim; hi may be 'auto'
    rows: Optional[str] = None  # leading-dim / pointer: expression
    pad: int = 0  # leading-dim: extra rows
    nnz: Optional[str] = None  # pointer: 'auto' or the size argument holding the count
    per_row: Optional[list[int]] = None  # pointer: entries per row [lo, hi]
    # segments (a START array; its COUNT array has role 'counts'): the count array's name,
    # the number of items, entries per item [lo, hi], the room the segments share
    count: Optional[str] = None
    items: Optional[str] = None
    per_item: Optional[list[int]] = None
    total: Optional[str] = None
    # integer array: values of single elements, cycled over the cases like a scalar's
    # (subscripts 'i,j' -> ints): the elements that bound loops ('grid_points(1)')
    elements: Optional[dict[str, list[int]]] = None
    # index: no value repeats (a permutation of the range where the array spans it): in-place
    # permutations that follow cycles (Nekbone's swap_ip) end the program on repeated values
    distinct: bool = False


@dataclass
class Tolerance:
    rel: float
    abs: float = 0.0
    reduction: bool = False


@dataclass
class Spec:
    kernel: str
    args: dict[str, ArgSpec]
    correctness: list[dict[str, int]]
    timing: dict[str, int]
    tolerance: dict[str, Tolerance]
    notes: list[str] = field(default_factory=list)
    # add the boundary-crossing case (harness.crossing) to the correctness sets; a user may
    # turn it off (`sizes.cross_tiles: false`), which verdicts and reports then show
    cross_tiles: bool = True
    edited: bool = False  # the file on disk differs from what was inferred
    path: Optional[str] = None

    def sizes(self) -> list[str]:
        return [n for n, a in self.args.items() if a.role == "size"]

    def to_data(self) -> dict:
        args = {}
        for name, a in self.args.items():
            d: dict[str, Any] = {"role": a.role, "intent": a.intent}
            for k in ("values", "range", "dims", "rows", "nnz", "per_row", "count", "items", "per_item", "total",
                      "elements"):
                v = getattr(a, k)
                if v is not None:
                    d[k] = v
            if a.role == "leading-dim":
                d["pad"] = a.pad
            if a.role == "index" and a.distinct:
                d["distinct"] = True
            args[name] = d
        return {
            "version": SPEC_VERSION,
            "kernel": self.kernel,
            "sizes": {"correctness": [dict(s) for s in self.correctness], "cross_tiles": self.cross_tiles,
                      "timing": dict(self.timing)},
            "args": args,
            "tolerance": {k: {"rel": t.rel, "abs": t.abs, "reduction": t.reduction}
                          for k, t in self.tolerance.items() if k == "result" or self.args[k].intent != "in"},
        }


# --------------------------------------------------------------------------- expressions


_ALLOWED_FUNCS = {"max": lambda *a: max(a), "min": lambda *a: min(a), "abs": abs}  # max(n): one argument too


def eval_expr(text: str | int, env: dict[str, int], where: str = "") -> int:
    """Evaluate a spec expression (``n + 1``, ``max(m, 1)``, ``lda * n``) with ``env``.
    Raises ValueError naming ``where`` for anything else."""
    if isinstance(text, bool):
        raise ValueError(f"{where}: expected an integer expression, got {text!r}")
    if isinstance(text, int):
        return text
    try:
        tree = ast.parse(str(text), mode="eval")
    except SyntaxError:
        raise ValueError(f"{where}: cannot parse expression {text!r}") from None

    def ev(n: ast.AST) -> int:
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.Name):
            if n.id.lower() not in env:
                raise ValueError(f"{where}: unknown name {n.id!r} in {text!r}")
            return int(env[n.id.lower()])
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = ev(n.operand)
            return -v if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Add):
                return a + b
            if isinstance(n.op, ast.Sub):
                return a - b
            if isinstance(n.op, ast.Mult):
                return a * b
            if isinstance(n.op, (ast.FloorDiv, ast.Div)):
                if b == 0:
                    raise ValueError(f"{where}: division by zero in {text!r}")
                q = abs(a) // abs(b)
                return q if (a >= 0) == (b >= 0) else -q
            if isinstance(n.op, ast.Mod):
                if b == 0:
                    raise ValueError(f"{where}: division by zero in {text!r}")
                return a - int(a / b) * b
            if isinstance(n.op, ast.Pow) and b >= 0:
                return a ** b
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _ALLOWED_FUNCS \
                and not n.keywords:
            return _ALLOWED_FUNCS[n.func.id](*[ev(a) for a in n.args])
        raise ValueError(f"{where}: unsupported expression {text!r}")

    return ev(tree)


def dim_parts(d: str) -> tuple[str, str]:
    if ":" in str(d):
        lo, hi = str(d).split(":", 1)
        return lo.strip(), hi.strip()
    return "1", str(d).strip()


# --------------------------------------------------------------------------- YAML


HEADER = """\
# port-fortran harness spec for kernel `{kernel}` ({where}).
# Inferred from the code; edit it to refine how inputs are made. An edited file is kept
# and reused by later runs (delete it to infer again).
#
# sizes.correctness: size sets for the differential test (each run with every flag value)
# sizes.cross_tiles: true adds one more set, computed from the loops: every parallel loop
#                    runs past the largest tile, team or GPU block a port may cut it into
#                    (2 x tile + 3 iterations, > 1024 for GPU blocks, within 32 MB); false
#                    turns it off
# sizes.timing:      the size set for timing (about 64 MB of array data)
# args.<name>.role:
#   size         an extent, taken from the size set
#   scalar       a random value in `range`; or `values`: a logical's drawn at random, an
#                integer's cycled over the cases (ints or expressions of the sizes, e.g. `n`:
#                the values that select the versions of a loop, see the notes)
#   stride       one of `values` (integers: zero and negative strides where the original
#                accepts them), cycled over the cases; the first one is timed
#   flag         each of `values` (characters) gets its own cases
#   leading-dim  `rows` (an expression) + `pad`
#   array        random values in `range`; `dims` are 'lower:upper' expressions of the
#                scalar arguments; 'auto' = the largest subscript the kernel touches;
#                `elements` (integer arrays): values of single elements, cycled over the
#                cases, the first one timed ('1': [12, 7, 1]: the elements that bound loops)
#   pointer      monotone segment pointers (CSR row pointers): p(1)=1, `rows` segments of
#                `per_row` entries each; `nnz` = 'auto' or the size argument holding p(rows+1)-1
#   index        integers in `range` ([lower, upper] expressions): subscripts of other arrays;
#                `distinct: true`: no value repeats (a permutation where the array spans the range)
#   segments     segment starts (unstructured meshes: `do ii = 1, cnt(i)` over `x(first(i) + ii - 1)`):
#                `items` segments, each of `per_item` [lo, hi] entries (zeros included), its
#                length in the `count` array; the segments are disjoint, laid out in a random
#                order within `total` (an expression: the extent of the arrays they index; a
#                size argument named there is set to items x per_item[1])
#   counts       the segment lengths of the `segments` array that names it (drawn with it)
# args.<name>.intent: out = poisoned (NaN / -123456789) before the call
# tolerance.<output>: rel (x max(|ref|, mean|ref|)), abs; reduction: true also scales by the
#   sum of input magnitudes (sums may be reordered by a parallel port)
"""


def _canon_hash(data: dict) -> str:
    d = {k: v for k, v in data.items() if k not in ("inferred_hash", "notes")}
    return hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()[:16]


def dump(spec: Spec, kernel: ir.Kernel) -> str:
    data = spec.to_data()
    where = f"{Path(kernel.file).name}:{kernel.line_start}" if kernel.file else "?"
    out = [HEADER.format(kernel=kernel.name, where=where)]
    for n in spec.notes:
        out.append(f"# note: {n}\n")
    out.append(yaml.safe_dump({"version": data["version"], "kernel": data["kernel"]}, sort_keys=False))
    out.append("sizes:\n  correctness:\n")
    for s in data["sizes"]["correctness"]:
        out.append("  - " + _flow(s) + "\n")
    out.append(f"  cross_tiles: {'true' if data['sizes']['cross_tiles'] else 'false'}\n")
    out.append("  timing: " + _flow(data["sizes"]["timing"]) + "\n")
    out.append("args:\n")
    for name, a in data["args"].items():
        out.append(f"  {name}: {_flow(a)}\n")
    out.append("tolerance:\n")
    for name, t in data["tolerance"].items():
        out.append(f"  {name}: {_flow(t)}\n")
    out.append(f"inferred_hash: {_canon_hash(data)}\n")
    return "".join(out)


def _flow(d: dict) -> str:
    return yaml.safe_dump(d, default_flow_style=True, sort_keys=False, width=10_000).strip()


def _elements(d, a: ir.Argument, field_: str, bad) -> dict[str, list[int]]:
    """``elements`` of an integer array: subscripts ('1' or '1,2', one per dimension) ->
    non-empty list of integers."""
    if a.ftype.base != "integer" or not isinstance(d, dict):
        raise bad(field_, "expected a mapping of subscripts ('1', '1,2') to lists of integers, for an integer array")
    out: dict[str, list[int]] = {}
    for k, v in d.items():
        subs = str(k).replace(" ", "").split(",")
        if len(subs) != a.rank or not all(x.lstrip("-").isdigit() for x in subs):
            raise bad(f"{field_}.{k}", f"expected {a.rank} integer subscript(s) separated by commas")
        if not isinstance(v, list) or not v or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            raise bad(f"{field_}.{k}", "expected a non-empty list of integers")
        out[",".join(subs)] = v
    return out


def parse(data: dict, kernel: ir.Kernel, fname: str) -> Spec:
    """Validate a spec mapping against the kernel; UserError names the offending field."""

    def bad(field_: str, what: str):
        return UserError(f"{fname}: {field_}: {what}")

    if data.get("kernel", kernel.name) != kernel.name:
        raise bad("kernel", f"is {data.get('kernel')!r} but the kernel is {kernel.name!r}")
    args_d = data.get("args")
    if not isinstance(args_d, dict):
        raise bad("args", "expected a mapping of argument name -> settings")
    names = [a.name for a in kernel.args]
    for n in args_d:
        if n not in names:
            raise bad(f"args.{n}", f"{kernel.name} has no argument {n!r} (arguments: {', '.join(names)})")
    args: dict[str, ArgSpec] = {}
    for a in kernel.args:
        d = args_d.get(a.name)
        f = f"args.{a.name}"
        if not isinstance(d, dict):
            raise bad(f, "missing (every argument needs a role)")
        role = d.get("role")
        if role not in ROLES:
            raise bad(f"{f}.role", f"expected one of {', '.join(ROLES)}")
        if (a.rank == 0) != (role in ("size", "scalar", "stride", "flag", "leading-dim")):
            raise bad(f"{f}.role", f"{role!r} does not fit a {'scalar' if a.rank == 0 else 'rank-%d array' % a.rank}")
        intent = d.get("intent", a.intent)
        if intent not in ("in", "out", "inout"):
            raise bad(f"{f}.intent", "expected in, out or inout")
        s = ArgSpec(role, intent)
        if role == "stride":
            v = d.get("values")
            if not isinstance(v, list) or not v or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
                raise bad(f"{f}.values", "expected a non-empty list of integers (zero and negative strides included)")
            s.values = v
        elif role == "flag":
            v = d.get("values")
            if not isinstance(v, list) or not v or not all(isinstance(x, str) and x for x in v):
                raise bad(f"{f}.values", "expected a list of non-empty strings (e.g. [N, T])")
            s.values = v
        elif role == "leading-dim":
            s.rows = str(d.get("rows", ""))
            if not s.rows:
                raise bad(f"{f}.rows", "expected an expression (the rows the leading dimension holds)")
            s.pad = d.get("pad", 0)
            if not isinstance(s.pad, int) or s.pad < 0:
                raise bad(f"{f}.pad", "expected a non-negative integer")
        elif role in ("scalar", "array"):
            if "values" in d:
                v = d["values"]
                if not isinstance(v, list) or not v:
                    raise bad(f"{f}.values", "expected a non-empty list")
                if role == "scalar" and a.ftype.base == "integer":
                    _check_choice_values(v, data, f"{f}.values", bad)
                s.values = v
            elif intent != "out" or "range" in d:
                r = d.get("range")
                if not (isinstance(r, list) and len(r) == 2 and all(isinstance(x, (int, float))
                                                                    and not isinstance(x, bool) for x in r)
                        and r[0] <= r[1]):
                    raise bad(f"{f}.range", "expected [low, high] numbers with low <= high")
                s.range = r
            if "elements" in d:
                s.elements = _elements(d["elements"], a, f"{f}.elements", bad)
        elif role == "index":
            r = d.get("range")
            if not (isinstance(r, list) and len(r) == 2):
                raise bad(f"{f}.range", "expected [low, high] expressions of the scalar arguments")
            s.range = [str(x) for x in r]
            if not isinstance(d.get("distinct", False), bool):
                raise bad(f"{f}.distinct", "expected true or false")
            s.distinct = bool(d.get("distinct", False))
        elif role == "pointer":
            s.rows = str(d.get("rows", ""))
            if not s.rows:
                raise bad(f"{f}.rows", "expected an expression (the number of segments)")
            s.nnz = str(d.get("nnz", "auto"))
            pr = d.get("per_row", [0, 6])
            if not (isinstance(pr, list) and len(pr) == 2 and all(isinstance(x, int) for x in pr) and 0 <= pr[0] <= pr[1]):
                raise bad(f"{f}.per_row", "expected [low, high] non-negative integers")
            s.per_row = pr
        elif role == "segments":
            s.count = str(d.get("count", ""))
            if s.count not in names:
                raise bad(f"{f}.count", f"expected the name of the argument holding each segment's length "
                                        f"(arguments: {', '.join(names)})")
            s.items, s.total = str(d.get("items", "")), str(d.get("total", ""))
            if not s.items:
                raise bad(f"{f}.items", "expected an expression (the number of segments)")
            if not s.total:
                raise bad(f"{f}.total", "expected an expression (the extent of the arrays the segments index)")
            pi = d.get("per_item", [0, 6])
            if not (isinstance(pi, list) and len(pi) == 2 and all(isinstance(x, int) and not isinstance(x, bool)
                                                                   for x in pi) and 0 <= pi[0] <= pi[1]):
                raise bad(f"{f}.per_item", "expected [low, high] non-negative integers")
            s.per_item = pi
        if a.rank:
            dims = d.get("dims")
            if not (isinstance(dims, list) and len(dims) == a.rank and all(isinstance(x, (str, int)) for x in dims)):
                raise bad(f"{f}.dims", f"expected a list of {a.rank} 'lower:upper' expressions")
            s.dims = [str(x) for x in dims]
        args[a.name] = s
    _check_segments(kernel, args, bad)
    sizes_d = data.get("sizes")
    if not isinstance(sizes_d, dict):
        raise bad("sizes", "expected a mapping with 'correctness' and 'timing'")
    size_names = [n for n, s in args.items() if s.role == "size"]
    corr = sizes_d.get("correctness")
    if not isinstance(corr, list) or not corr:
        raise bad("sizes.correctness", "expected a non-empty list of size sets")
    for k, c in enumerate(corr):
        _check_size_set(c, size_names, f"sizes.correctness[{k}]", bad)
    timing = sizes_d.get("timing") or {}
    _check_size_set(timing, size_names, "sizes.timing", bad)
    cross = sizes_d.get("cross_tiles", True)  # absent in spec files written before it existed
    if not isinstance(cross, bool):
        raise bad("sizes.cross_tiles", "expected true or false")
    tol_d = data.get("tolerance") or {}
    if not isinstance(tol_d, dict):
        raise bad("tolerance", "expected a mapping of output name -> {rel, abs}")
    default = infer_tolerances(kernel)
    tol = dict(default)
    for n, t in tol_d.items():
        if n not in default:
            raise bad(f"tolerance.{n}", "no such output")
        if not isinstance(t, dict):
            raise bad(f"tolerance.{n}", "expected {rel: ..., abs: ...}")
        rel, ab = t.get("rel", default[n].rel), t.get("abs", default[n].abs)
        for key, v in (("rel", rel), ("abs", ab)):
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                raise bad(f"tolerance.{n}.{key}", "expected a non-negative number")
        tol[n] = Tolerance(float(rel), float(ab), bool(t.get("reduction", default[n].reduction)))
    return Spec(kernel=kernel.name, args=args, correctness=[dict(c) for c in corr], timing=dict(timing),
                tolerance=tol, cross_tiles=cross)


def _check_segments(kernel: ir.Kernel, args: dict[str, ArgSpec], bad) -> None:
    """Each 'segments' array names a rank-1 integer 'counts' array that no other names, and
    each 'counts' array is named by one."""
    named: dict[str, str] = {}
    for n, s in args.items():
        if s.role in ("segments", "counts") and (kernel.arg(n).rank != 1 or kernel.arg(n).ftype.base != "integer"):
            raise bad(f"args.{n}.role", f"{s.role!r} needs a rank-1 integer array")
        if s.role != "segments":
            continue
        if args[s.count].role != "counts":
            raise bad(f"args.{n}.count", f"{s.count!r} has role {args[s.count].role!r}; give it role 'counts'")
        if s.count in named:
            raise bad(f"args.{n}.count", f"{s.count!r} already holds the lengths of {named[s.count]!r}")
        named[s.count] = n
    for n, s in args.items():
        if s.role == "counts" and n not in named:
            raise bad(f"args.{n}.role", "'counts' needs a 'segments' array naming it (count: " + n + ")")


def following_sizes(args: dict[str, ArgSpec], nnz_factor: int = 3) -> dict[str, tuple[str, int]]:
    """Size arguments whose value follows others (name -> (expression, factor): the value is
    factor x max(1, expression)): a pointer's nnz (``nnz_factor`` x rows) and the room of
    segments (the most entries per item x items, so that every draw fits)."""
    out = {s.nnz: (s.rows, nnz_factor) for s in args.values() if s.role == "pointer" and s.nnz not in (None, "auto")}
    for s in args.values():
        if s.role == "segments" and s.total in args and args[s.total].role == "size":
            out[s.total] = (s.items, max(1, s.per_item[1]))
    return out


def follow(rule: tuple[str, int], env: dict[str, int]) -> int:
    """The value of a following size (:func:`following_sizes`) given the others."""
    return rule[1] * max(1, eval_expr(rule[0], env))


def _check_choice_values(v: list, data: dict, f: str, bad) -> None:
    """Values of an integer scalar: integers, or expressions of the size arguments."""
    sizes = {n for n, d in (data.get("args") or {}).items() if isinstance(d, dict) and d.get("role") == "size"}
    for x in v:
        if isinstance(x, bool) or not isinstance(x, (int, str)):
            raise bad(f, f"expected integers or expressions of the sizes, got {x!r}")
        if isinstance(x, str):
            try:
                eval_expr(x, {n: 1 for n in sizes}, f)
            except ValueError as exc:
                raise bad(f, f"{exc} (expressions may use the size arguments {', '.join(sorted(sizes)) or '(none)'})") \
                    from None


def _check_size_set(c, size_names, f, bad) -> None:
    if not isinstance(c, dict):
        raise bad(f, f"expected a mapping of {', '.join(size_names) or 'size arguments'} to integers")
    for n in size_names:
        if n not in c:
            raise bad(f"{f}.{n}", "missing")
    for n, v in c.items():
        if n not in size_names:
            raise bad(f"{f}.{n}", f"not a size argument (sizes: {', '.join(size_names)})")
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise bad(f"{f}.{n}", "expected a non-negative integer")


def infer_tolerances(kernel: ir.Kernel) -> dict[str, Tolerance]:
    """Per output: by type (float64 1e-12, float32 1e-5 relative), reductions also scaled by
    the sum of magnitudes; inputs (compared to catch a port writing them) exactly."""
    red = ir_facts.has_reduction(kernel)
    tol = {}
    for v in list(kernel.args) + ([kernel.result] if kernel.result is not None else []):
        name = "result" if v is kernel.result else v.name
        if v is not kernel.result and v.intent == "in":
            tol[name] = Tolerance(rel=0.0)
        elif v.ftype.base in ("real", "complex"):
            tol[name] = Tolerance(rel=TOL.get(v.ftype.kind, 1e-12), reduction=red)
        else:
            tol[name] = Tolerance(rel=0.0)
    return tol
