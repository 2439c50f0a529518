"""The interpreter's recursion limit for the IR (a leaf module: the parser, the program
model and the workers that load pickled programs all need it)."""
from __future__ import annotations

import sys

# Deep expressions (a 400-term stencil is a 400-level tree) need more than Python's default
# 1,000 frames to pickle, copy or walk; 20,000 keeps the C stack of an 8 MiB thread safe
# (pickling a chain of 10,000 operations passes, 20,000 crashes the interpreter), and
# exprs.MAX_CHAIN keeps expressions below the depth this allows.
RECURSION_LIMIT = 20000


def ensure_recursion_limit() -> None:
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
