"""COMMON members a routine's callees touch, in the routine's own names (pure over the IR).

A routine that declares a COMMON block hands its callees the whole block. The harness
drove only the members the routine's own statements touch (and those its calls pass to
callees that only read them, ``effects.pass_common_reads``): a callee that also writes the
block (a call counter, a trace stack: Livermore's TRACE, WATCH) got its other members as
0, so one dividing by ``nx * ny`` died of SIGFPE on every input (``original-failed``;
``tests/data/common/calleeblk.f``), and what such a callee writes is an output of the
routine that the comparison never looked at.

:func:`callee_commons` gives, for each member of a block the routine declares, whether a
routine it calls (and theirs, :data:`DEPTH` calls deep) reads it (False) or may write it
(True): the callee's member at the same offset of the block of the same name, with the same
type and shape, is the routine's member (``translate.common_blocks`` lays both out as
gfortran does). A block either side cannot lay out for sure, and members that do not line
up, are left out: they stay what they were (not driven), never guessed. The harness drives
them like the routine's own members (``members.driven_kernel``): drawn before the call,
compared after it where a callee may write them.
"""
from __future__ import annotations

import copy
from typing import Callable, Optional

from ..fortran import ir
from ..fortran.common_use import call_sites
from ..translate.common_blocks import Block, blocks
from ..translate.symbols import Refusal

DEPTH = 4  # calls followed below the routine

Resolve = Callable[[ir.Kernel, str], Optional[ir.Kernel]]
_Key = tuple  # (block name, offset, type, bounds)


def _layout(k: ir.Kernel) -> list[Block]:
    """``k``'s blocks laid out one at a time: a block that cannot be laid out for sure
    (Livermore's TRACE keeps CHARACTER names in /DEBUG/) costs only itself."""
    out: list[Block] = []
    for name in dict.fromkeys(cb.name for cb in k.commons):
        one = copy.copy(k)
        one.commons = [cb for cb in k.commons if cb.name == name]
        try:
            out += blocks(one)
        except Refusal:
            continue
    return out


def _key(block: str, m) -> _Key:
    return (block, m.offset, (m.ftype.base, m.ftype.kind, m.ftype.char_len), tuple(m.bounds))


def _touched(k: ir.Kernel, resolve: Resolve, depth: int, memo: dict, active: frozenset) -> dict[_Key, bool]:
    """Members ``k`` or its callees touch: key -> whether one may write it."""
    if (id(k), depth) in memo:
        return memo[(id(k), depth)]
    out: dict[_Key, bool] = {}
    for b in _layout(k):
        for m in b.used():
            out[_key(b.name, m)] = out.get(_key(b.name, m), False) or m.written
    if depth > 0:
        for name, _args, _line in call_sites(k.body):
            callee = resolve(k, name)
            if callee is None or callee is k or callee.name in active:
                continue
            for key, w in _touched(callee, resolve, depth - 1, memo, active | {k.name}).items():
                out[key] = out.get(key, False) or w
    memo[(id(k), depth)] = out
    return out


def callee_commons(k: ir.Kernel, resolve: Optional[Resolve]) -> dict[str, bool]:
    """{member name in ``k``: whether a callee may write it} for the members of the blocks
    ``k`` declares that its own statements do not touch but a routine it calls does (as
    the module docstring says); {} without ``resolve``, COMMON or calls."""
    if resolve is None or not k.commons or not k.calls:
        return {}
    mine = {_key(b.name, m): m for b in _layout(k) for m in b.members if not m.used}
    if not mine:
        return {}
    # what k touches itself is no key of ``mine``: only its callees' touches remain
    theirs = _touched(k, resolve, DEPTH, {}, frozenset())
    return {mine[key].name: w for key, w in theirs.items() if key in mine}
