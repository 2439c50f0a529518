"""The blocks a port splits a parallel loop nest into: the optimizer's MDRange tile
variants, the tiles Kokkos picks by itself, GPU thread blocks and teams. One place, read by
the optimizer (which tiles to try) and by the harness (its boundary-crossing correctness
case must exceed every block in every parallel dimension, and not be a multiple of it).

Positions are counted fastest-varying first, as the translator orders an MDRange band
(:func:`fast_order`): position 0 is the loop whose index is the leftmost (contiguous)
subscript.
"""
from __future__ import annotations

from ..fortran import ir
from .access import names_in, own_exprs

# MDRange tile variants the optimizer tries, by the rank of the nest
TILES = ((32, 8), (64, 4), (16, 16), (128, 2))
# for rank-3 nests (3-D stencils); a tile whose rank differs from the nest's is ignored by
# the translator, so 2-D tiles would only re-time the baseline
TILES3 = ((64, 4, 1), (32, 4, 2), (128, 2, 1), (16, 8, 2))
# the largest CUDA/HIP thread block (threads): a 1-D range is cut into blocks of up to this
# many iterations, a team has up to this many threads, and one MDRange tile dimension holds
# at most this many
GPU_BLOCK = 1024
# tiles Kokkos chooses when a port gives none: on the host the fastest dimension whole and
# 2 in the others; on a GPU 16 in the fastest and 2 in the others (Kokkos'
# get_tile_size_properties)
DEFAULT_TILE_FAST = 16
DEFAULT_TILE_OTHER = 2


def tiles_for(rank: int) -> tuple[tuple[int, ...], ...]:
    """The tile variants the optimizer may give a band of ``rank`` loops."""
    return TILES3 if rank == 3 else TILES if rank == 2 else ()


def blocks_at(rank: int, position: int) -> set[int]:
    """Every block extent (iterations) a port of a band of ``rank`` loops may use at
    ``position`` (0 = fastest) on any backend: the optimizer's tiles, Kokkos' default
    tiles, and a GPU block (the fastest dimension of a 1-D range or of an MDRange tile)."""
    out = {t[position] for t in tiles_for(rank) if position < len(t)}
    out.add(DEFAULT_TILE_FAST if position == 0 else DEFAULT_TILE_OTHER)
    if position == 0:
        out.add(GPU_BLOCK)
    return out


def team_blocks() -> set[int]:
    """Thread counts a TeamPolicy (``Kokkos::AUTO``) may split a team's inner range over."""
    return {GPU_BLOCK}


def fast_order(band: list[ir.Do], iterate_left: bool = True) -> list[ir.Do]:
    """The band's loops ordered fastest-varying first: the loop whose variable is the
    leftmost (contiguous) subscript of the arrays it touches; with ``iterate_left`` off,
    the Fortran nest order instead (outermost fastest)."""
    if not iterate_left:
        return list(band)
    vars_ = [d.var for d in band]
    score: dict[str, list[int]] = {v: [] for v in vars_}
    for s in ir.walk(band[-1].body):
        exprs = list(own_exprs(s)) + ([s.target] if isinstance(s, ir.Assign) else [])
        for e in exprs:
            for x in ir.walk_expr(e):
                if isinstance(x, ir.ArrayRef) and len(x.subscripts) > 1:
                    for pos, sub in enumerate(x.subscripts):
                        for v in names_in(sub) & set(vars_):
                            score[v].append(pos)
    depth = {v: i for i, v in enumerate(vars_)}
    return sorted(band, key=lambda d: (min(score[d.var]) if score[d.var] else 99, -depth[d.var]))
