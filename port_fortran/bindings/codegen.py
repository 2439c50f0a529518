"""The C++ source and the CMake project of a Python module of ports (pure: text from plans).

The module calls each port's ``extern "C"`` entry, the same entry a Fortran program calls:
that entry wraps the caller's (here numpy's) memory, copies it to the device when the
backend's memory is not host-accessible, and copies written arrays back. The module adds
what a Python caller needs on top: the argument checks of ``support/pf_pybind.hpp``, the
GIL released during the call, the returned scalars, and ``kokkos_info()``.

C++ identifiers in the wrappers are positional (``p3``, ``v3``, ``x3``), so no Fortran name
can clash with them; Fortran names appear as C++ identifiers only in the extent helpers,
whose parameters are exactly the scalars the extents name (as the translator spells them).
"""
from __future__ import annotations

import json

from .plan import PY_TYPES, ArgBinding, CommonBinding, FunctionBinding

SUPPORT_HEADER = "pf_pybind.hpp"


def _c_string(text: str) -> str:
    return json.dumps(text)  # a C string literal for ASCII text (JSON escapes are C escapes)


def _convert(a: ArgBinding, src: str, spec: str) -> str:
    if a.base == "integer":
        return f"pf_py::integer<{a.ctype}>({src}, {spec})"
    if a.base == "real":
        return f"pf_py::real<{a.ctype}>({src}, {spec})"
    if a.base == "complex":
        return f"pf_py::complex<{a.ctype}>({src}, {spec})"
    if a.base == "logical":
        return f"pf_py::logical<{a.ctype}>({src}, {spec})"
    return f"pf_py::character({src}, {spec})"


def _to_py(base: str, value: str) -> str:
    return f"pf_py::logical_to_py({value})" if base == "logical" else f"pf_py::to_py({value})"


def need_helper(f: FunctionBinding) -> list[str]:
    """``static void pf_need_<k>(long long* _pf_need, <scalars>)``: the extent of every
    dimension of every array argument, in argument order, for the given scalars."""
    params = ["long long* _pf_need"] + [f"{ctype} {c}" for _, c, ctype in f.extent_scalars]
    out = [f"static void pf_need_{f.name}({', '.join(params)}) {{"]
    out += [f"  {c}" for c in f.consts]
    k = 0
    for a in f.args:
        for lo, hi in a.extents:
            out.append(f"  _pf_need[{k}] = static_cast<long long>(pf::extent({lo}, {hi}));  // {a.name}")
            k += 1
    if k == 0:
        out.append("  (void)_pf_need;")
    out.append("}")
    return out


def docstring(f: FunctionBinding, backend: str) -> str:
    sig = ", ".join(a.name for a in f.python_args)
    types = {a.name: PY_TYPES[a.base] for a in f.args}
    if f.result_base:
        types["result"] = PY_TYPES[f.result_base]
    if not f.returns:
        ret = "None"
    elif len(f.returns) == 1:
        ret = types[f.returns[0]]
    else:
        ret = "(" + ", ".join(f"{r}: {types[r]}" for r in f.returns) + ")"
    lines = [f"{f.name}({sig}{', ' if sig else ''}*, {f.copy_keyword}=False) -> {ret}", "",
             f"Kokkos port of {f.kind} {f.name} ({f.file}:{f.line_start}-{f.line_end}), {backend} backend.",
             "Arguments in the Fortran order:"]
    width = max([len(a.name) for a in f.args] + [4])
    for a in f.args:
        if a.is_array:
            what = (f"numpy {a.dtype_name} array, {a.rank}-D, Fortran order, {a.declared}"
                    + (", written in place" if a.writable else ""))
        elif not a.python_arg:
            what = f"{PY_TYPES[a.base]}, not passed: returned"
        else:
            what = PY_TYPES[a.base] + (", its new value is returned" if a.returned else "")
        lines.append(f"  {a.name.ljust(width)}  {a.ftype}, intent({a.intent}): {what}")
    if f.result_base:
        lines.append(f"Returns the function result ({f.result_ftype}) first.")
    lines.append(f"{f.copy_keyword}=True: arrays not in Fortran order are copied (and written ones copied back).")
    return "\n".join(lines)


def wrapper(f: FunctionBinding) -> list[str]:
    """The C++ function behind ``module.<name>``."""
    pyargs = f.python_args
    params = [f"py::object p{a.position}" for a in pyargs] + ["bool copy"]
    out = [f"// {f.kind} {f.name} ({f.file}:{f.line_start}-{f.line_end})", f.prototype, ""]
    out += need_helper(f)
    out += ["", f"static py::object pf_call_{f.name}({', '.join(params)}) {{"]
    for a in f.args:
        out.append(f"  static const pf_py::Arg s{a.position}{{{_c_string(f.name)}, {a.position}, {_c_string(a.name)}, "
                   f"{_c_string(a.ftype)}, {_c_string(a.intent)}, {_c_string(a.declared)}}};")
    for a in f.args:  # scalars first: the array extents depend on them
        if a.is_array:
            continue
        if a.python_arg:
            out.append(f"  {a.ctype} v{a.position} = {_convert(a, f'p{a.position}', f's{a.position}')};")
        else:
            out.append(f"  {a.ctype} v{a.position} = {{}};  // intent(out): returned")
    ndims = sum(a.rank for a in f.args)
    vals = ", ".join([f"v{pos}" for name, _, _ in f.extent_scalars
                      for pos in [next(a.position for a in f.args if a.name == name)]])
    if ndims:
        out.append(f"  long long need[{ndims}];")
        out.append(f"  pf_need_{f.name}(need{', ' if vals else ''}{vals});")
    k = 0
    for a in f.args:
        if not a.is_array:
            continue
        bounds = ", ".join(_c_string(b) for b in a.bounds_text)
        out.append(f"  static const char* const b{a.position}[] = {{{bounds}}};")
        out.append(f"  pf_py::ArrayArg x{a.position} = pf_py::array(p{a.position}, s{a.position}, "
                   f"{_c_string(a.dtype)}, {_c_string(a.dtype_name)}, {a.rank}, need + {k}, b{a.position}, "
                   f"{'true' if a.writable else 'false'}, copy, {_c_string(f.copy_keyword)});")
        k += a.rank
    actual = []
    for a in f.args:
        if a.is_array:
            actual.append(f"static_cast<{a.ctype}*>(x{a.position}.ptr())")
        elif a.value:
            actual.append(f"v{a.position}")
        else:
            actual.append(f"&v{a.position}")
    call = f"{f.entry}({', '.join(actual)})"
    if f.result_base:
        out.append(f"  {f.result_ctype} result{{}};")
        call = f"result = {call}"
    out += ["  {", "    py::gil_scoped_release nogil;", "    std::lock_guard<std::mutex> lock(pf_py::call_mutex());",
            f"    {call};", "  }"]
    for a in f.args:
        if a.is_array and a.writable:
            out.append(f"  x{a.position}.write_back();")
    rets = ([_to_py(f.result_base, "result")] if f.result_base else [])
    rets += [_to_py(a.base, f"v{a.position}") for a in f.args if a.returned]
    out.append(f"  return pf_py::pack({{{', '.join(rets)}}});")
    out.append("}")
    return out


def _common_exposure(c: CommonBinding) -> list[str]:
    out = ["  {", f"    py::dict members;  // COMMON {c.title}"]
    for m in c.members:
        shape = ", ".join(str(max(0, hi - lo + 1)) for lo, hi in m.bounds)
        addr = f"{c.symbol}.{m.c}" if m.bounds else f"&{c.symbol}.{m.c}"
        out.append(f"    members[{_c_string(m.name)}] = pf_py::member_view(static_cast<void*>({addr}), "
                   f"{_c_string(m.dtype)}, {{{shape}}}, m);")
    out += [f"    blocks[{_c_string(c.py_name)}] = ns(**members);", "  }"]
    return out


def module_source(module: str, functions: list[FunctionBinding], commons: list[CommonBinding], backend: str,
                  ports: dict[str, str]) -> str:
    """The whole ``<module>.cpp``. ``ports`` maps each routine to its port directory (kept
    in the module as ``__ports__``)."""
    out = [f"// {module}.cpp -- Python module of {len(functions)} Kokkos port(s), written by port-fortran",
           "// (`port-fortran bindings`). Do not edit: build it again with the same command.",
           "#include <mutex>", "", '#include "pf_kokkos_compat.hpp"', f'#include "{SUPPORT_HEADER}"', "",
           "namespace py = pybind11;", ""]
    for c in commons:
        out += list(c.definition) + [""]
    for f in functions:
        out += wrapper(f) + [""]
    out += [
        f"PYBIND11_MODULE({module}, m) {{",
        "  py::options options;",
        "  options.disable_function_signatures();  // each docstring starts with the Python signature",
        f"  m.doc() = {_c_string(f'Kokkos ports built by port-fortran for the {backend} backend: ' + ', '.join(f.name for f in functions))};",
        f"  m.attr(\"__backend__\") = {_c_string(backend)};",
        "  py::dict ports;",
    ]
    for f in functions:
        out.append(f"  ports[{_c_string(f.name)}] = {_c_string(ports.get(f.name, ''))};")
    out.append("  m.attr(\"__ports__\") = ports;")
    for f in functions:
        args = "".join(f", py::arg({_c_string(a.name)})" for a in f.python_args)
        out.append(f"  m.def({_c_string(f.name)}, &pf_call_{f.name}{args}, py::kw_only(), "
                   f"py::arg({_c_string(f.copy_keyword)}) = false,")
        out.append(f"        {_c_string(docstring(f, backend))});")
    out += [
        "  m.def(\"kokkos_info\", []() {",
        "    std::lock_guard<std::mutex> lock(pf_py::call_mutex());",
        "    pf::ensure_initialized();  // once per process; finalized at exit",
        "    py::dict d;",
        f"    d[\"backend\"] = {_c_string(backend)};",
        "    d[\"execution_space\"] = pf::ExecSpace::name();",
        "    d[\"memory_space\"] = pf::MemSpace::name();",
        "    d[\"concurrency\"] = static_cast<long long>(pf::ExecSpace().concurrency());",
        "    d[\"kokkos_version\"] = static_cast<long long>(KOKKOS_VERSION);",
        "    return d;",
        "  }, \"kokkos_info() -> dict\\n\\nInitialises Kokkos if no port has been called yet; returns the backend, its\\n"
        "execution and memory spaces, their concurrency (threads) and the Kokkos version.\");",
    ]
    if commons:
        out += ["  py::object ns = py::module_::import(\"types\").attr(\"SimpleNamespace\");", "  py::dict blocks;"]
        for c in commons:
            out += _common_exposure(c)
        out.append("  m.attr(\"common\") = ns(**blocks);")
    out.append("}")
    return "\n".join(out) + "\n"


def module_cmake(module: str, port_dirs: dict[str, str], support_dir: str) -> str:
    """The CMake project: each port as a subdirectory (its library target), the module on top.
    The module's target is ``pf_module`` (a port's library is ``<k>_kokkos``, which is also
    the default module name) with ``OUTPUT_NAME`` the module's name."""
    subdirs = "\n".join(f'add_subdirectory("{d}" port_{k})' for k, d in port_dirs.items())
    libs = " ".join(f"{k}_kokkos" for k in port_dirs)
    return f"""\
# Generated by port-fortran: Python module {module} (do not edit).
cmake_minimum_required(VERSION 3.16)
project(pf_python_{module} CXX)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)  # the ports' static libraries go into a shared module
find_package(Kokkos REQUIRED)
find_package(Python COMPONENTS Interpreter Development.Module REQUIRED)
find_package(pybind11 CONFIG REQUIRED)
if(PF_BACKEND)
  string(TOUPPER "${{PF_BACKEND}}" _pf_b)
  add_compile_definitions(PF_BACKEND_${{_pf_b}})
endif()
{subdirs}
# NO_EXTRAS: no link-time optimisation or stripping (faster builds; nvcc_wrapper-safe)
pybind11_add_module(pf_module MODULE NO_EXTRAS {module}.cpp)
set_target_properties(pf_module PROPERTIES OUTPUT_NAME {module})
target_include_directories(pf_module PRIVATE "{support_dir}")
target_link_libraries(pf_module PRIVATE {libs} Kokkos::kokkos)
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  # the static Kokkos and port libraries stay private to this module: it never binds to
  # another Kokkos that something else in the Python process brought in
  target_link_options(pf_module PRIVATE "LINKER:--exclude-libs,ALL")
endif()
"""
