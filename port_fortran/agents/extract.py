"""Pull the C++ source out of an LLM answer.

Answers come as one fenced block (```cpp ... ```), several blocks (a header and the
source, or the code split in parts), an unterminated fence, or bare code after some prose.
:func:`extract_code` returns the source to write as ``<k>.kokkos.cpp``; it never invents
code: with nothing that looks like C++ it returns ``""``.
"""
from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.S | re.M)
_OPEN_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n", re.M)
_CPP_LANGS = {"cpp", "c++", "cxx", "cc", "c", "cuda", "hpp", "h", "kokkos"}
_NON_CPP_LANGS = {"fortran", "f90", "f", "bash", "sh", "shell", "cmake", "text", "console", "python", "json",
                  "yaml", "diff", "makefile"}
_CODE_START = re.compile(
    r"^\s*(#\s*(include|define|if|ifdef|ifndef|pragma)\b|//|/\*|extern\s+\"C\"|namespace\b|template\s*<|"
    r"(static\s+|inline\s+)*(void|int|double|float|auto|struct|class|using|typedef|const|KOKKOS_\w+)\b)"
)


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of each closed fenced block, in order; an unterminated last fence
    counts as a block running to the end of the answer."""
    blocks = [(m.group(2).lower(), m.group(3)) for m in _FENCE.finditer(text)]
    last_end = 0
    for m in _FENCE.finditer(text):
        last_end = m.end()
    rest = text[last_end:]
    m = _OPEN_FENCE.search(rest)
    if m:
        blocks.append((m.group(2).lower(), rest[m.end():]))
    return blocks


def _looks_cpp(body: str) -> bool:
    return bool(re.search(r"#include|Kokkos::|extern\s+\"C\"|\bvoid\b|;\s*$", body, re.M))


def _strip_prose(text: str) -> str:
    """Bare answer: drop leading prose up to the first line that starts C++ code, and
    trailing prose after the last line that ends a C++ statement or block."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if _CODE_START.match(ln)), None)
    if start is None:
        return ""
    end = len(lines)
    while end > start and not re.search(r"[;}]\s*(//.*)?$|^\s*#|^\s*$", lines[end - 1]):
        end -= 1
    return "\n".join(lines[start:end]).strip() + "\n"


def extract_code(text: str, entry: str | None = None) -> str:
    """The C++ source in an LLM answer.

    With fenced blocks: the C++ ones (by language tag, or untagged ones that look like
    C++); if ``entry`` (e.g. ``axpy_kokkos``) is given and one block defines it, that
    block with the others that come before it that are not a repeat of the header we
    already own (blocks with ``#pragma once``) — most answers put helpers first. With no
    fence: the code after any leading prose."""
    if not text or not text.strip():
        return ""
    blocks = fenced_blocks(text)
    if blocks:
        cpp = [b for lang, b in blocks
               if lang in _CPP_LANGS or (lang not in _NON_CPP_LANGS and _looks_cpp(b))]
        if not cpp:
            return ""
        cpp = [b for b in cpp if "#pragma once" not in b] or cpp
        if entry:
            defn = re.compile(rf"\b{re.escape(entry)}\s*\([^;{{}}]*\)\s*(noexcept\s*)?\{{")
            defining = [i for i, b in enumerate(cpp) if defn.search(b)]
            if defining:
                cpp = cpp[: defining[-1] + 1]
        return "\n\n".join(b.strip("\n") for b in cpp).strip() + "\n"
    return _strip_prose(text)
