"""Code extraction from LLM answers."""
from port_fortran.agents.extract import extract_code, fenced_blocks

CODE = '#include "k.kokkos.hpp"\nextern "C" void k_kokkos(int* n) {\n  *n = 1;\n}\n'


def test_single_fenced_block_with_prose():
    text = f"Sure! Here is the port.\n\n```cpp\n{CODE}```\n\nThis uses Kokkos::parallel_for."
    assert extract_code(text) == CODE


def test_other_language_tags_and_tildes():
    for tag in ("c++", "C++", "cxx", "", "cuda"):
        assert extract_code(f"```{tag}\n{CODE}```") == CODE
    assert extract_code(f"~~~cpp\n{CODE}~~~") == CODE


def test_several_blocks_helpers_first_and_header_repeat_dropped():
    helper = "static inline double sq(double x) { return x * x; }\n"
    header = '#pragma once\nextern "C" void k_kokkos(int* n);\n'
    text = (f"The header:\n```cpp\n{header}```\nA helper:\n```cpp\n{helper}```\nThe entry:\n```cpp\n{CODE}```\n"
            "And the Fortran:\n```fortran\ncall k(n)\n```\nTo build:\n```bash\ncmake ..\n```")
    out = extract_code(text, "k_kokkos")
    assert "sq(double" in out and "k_kokkos(int* n) {" in out and "#pragma once" not in out
    assert out.index("sq(double") < out.index("k_kokkos")
    assert "cmake" not in out and "call k" not in out


def test_blocks_after_the_entry_are_dropped_when_entry_known():
    text = f"```cpp\n{CODE}```\nUsage example:\n```cpp\nint main() {{ int n; k_kokkos(&n); }}\n```"
    # the last block only *calls* the entry; the one that defines it is the first
    assert extract_code(text, "k_kokkos") == CODE


def test_unterminated_fence():
    assert extract_code(f"Here:\n```cpp\n{CODE}") == CODE


def test_no_fence_leading_and_trailing_prose():
    text = f"Below is the translation you asked for.\n\n{CODE}\nLet me know if you need changes."
    out = extract_code(text)
    assert out.startswith('#include "k.kokkos.hpp"') and out.rstrip().endswith("}")
    assert "Let me know" not in out and "Below" not in out


def test_nothing_codelike():
    assert extract_code("I cannot help with that.") == ""
    assert extract_code("") == ""
    assert extract_code("```fortran\nx = 1\n```") == ""


def test_fenced_blocks_order():
    blocks = fenced_blocks("```cpp\na;\n```\ntext\n```python\nb\n```")
    assert [b[0] for b in blocks] == ["cpp", "python"]
