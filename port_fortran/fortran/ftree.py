"""Small helpers over fparser2's parse tree: names, lines (mapped back to the user's
file), labels, children."""
from __future__ import annotations

from typing import Optional

from fparser.two.utils import Base

from .reader import SourceText


def lname(node) -> str:
    return str(node).strip().lower()


def stmt_line(node, src: SourceText) -> int:
    item = getattr(node, "item", None)
    if item is not None and getattr(item, "span", None):
        return src.origin(item.span[0]).main_line
    for c in getattr(node, "children", None) or []:
        if isinstance(c, Base):
            ln = stmt_line(c, src)
            if ln:
                return ln
    return 0


def raw_line(node) -> int:
    item = getattr(node, "item", None)
    if item is not None and getattr(item, "span", None):
        return item.span[0]
    for c in getattr(node, "children", None) or []:
        if isinstance(c, Base):
            ln = raw_line(c)
            if ln:
                return ln
    return 0


def last_raw_line(node) -> int:
    """The last line (of the text fparser read) a statement or construct spans: its own
    end for a statement (continuation lines included), its last statement's for a construct."""
    item = getattr(node, "item", None)
    if item is not None and getattr(item, "span", None):
        return item.span[1]
    for c in reversed(getattr(node, "children", None) or []):
        if isinstance(c, Base):
            ln = last_raw_line(c)
            if ln:
                return ln
    return 0


def stmt_label(node) -> Optional[int]:
    item = getattr(node, "item", None)
    lab = getattr(item, "label", None) if item is not None else None
    try:
        return int(lab) if lab is not None else None
    except (TypeError, ValueError):
        return None


def find_nodes(root, types) -> list:
    """Nodes of the given classes under ``root`` in pre-order (fparser's ``walk``, without
    its recursion: a 1,000-term expression is 1,000 levels deep)."""
    out, stack = [], [root]
    while stack:
        n = stack.pop()
        if isinstance(n, types):
            out.append(n)
        if isinstance(n, Base):
            kids = n.children
        elif isinstance(n, (list, tuple)):
            kids = n
        else:
            continue
        stack.extend(reversed([c for c in kids if isinstance(c, (Base, list, tuple))]))
    return out


def children(node) -> list:
    return [c for c in (getattr(node, "children", None) or []) if c is not None]


def stmt_children(node) -> list:
    """Children of a construct without comments."""
    return [c for c in children(node) if type(c).__name__ != "Comment"]


def list_items(node) -> list:
    """Items of an fparser *_List (or a single item)."""
    if node is None:
        return []
    if type(node).__name__.endswith("_List"):
        return [c for c in node.items if c is not None]
    return [node]
