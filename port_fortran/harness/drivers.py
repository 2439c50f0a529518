"""Driver programs, generated per kernel (pure functions returning source text).

Both drivers take ``run IN OUT`` (read the records, call once, write every argument and
the function result) or ``time IN WARMUP REPEATS`` (restore the inputs before each call,
print ``PF_TIME <seconds>`` per repeat after the warm-up). The Fortran driver calls the
original routine compiled from the user's own file; the C++ driver calls ``<k>_kokkos``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..fortran import ir
from ..fortran_lines import wrap_free_source
from . import members
from ..fortran.strings import string_result
from .inputs import type_code
from .strlen import result_length_reason

C_TYPES = {
    ("integer", 1): "int8_t", ("integer", 2): "int16_t", ("integer", 4): "int32_t", ("integer", 8): "int64_t",
    ("real", 4): "float", ("real", 8): "double",
    ("complex", 4): "std::complex<float>", ("complex", 8): "std::complex<double>",
    ("logical", 1): "int8_t", ("logical", 4): "int32_t", ("logical", 8): "int64_t",
}


def public_source(path, kernel: ir.Kernel, text: Optional[str] = None) -> Optional[str]:
    """The text of ``path`` (or ``text``, a hybrid copy of it) with the PRIVATE module
    procedure ``kernel`` made PUBLIC, what the harness compiles so that its driver can call
    it (``publish.public_copy``); None when that cannot be done."""
    from ..fortran.reader import FREE_EXTS
    from .publish import public_copy

    if text is None:
        try:
            text = Path(path).read_text(errors="replace")
        except OSError:
            return None
    form = "free" if Path(path).suffix.lower() in FREE_EXTS else "fixed"
    return public_copy(text, form, kernel.module or "", private_names(kernel))


def private_names(kernel: ir.Kernel) -> list[str]:
    """The PRIVATE entities of the kernel's own module the driver must reach: the procedure
    itself and the module variables it uses (set as inputs, compared as outputs), or that
    its callees read and the driven kernel sets (``members.driven_kernel``)."""
    names = [kernel.name] if getattr(kernel, "private", False) else []
    driven = {a.name for a in kernel.args if getattr(a, "module", None)}
    theirs = {n: v for n, v in getattr(kernel, "callee_module_reads", {}).items() if n in driven}
    names += [n for n, v in {**theirs, **kernel.module_vars}.items()
              if getattr(v, "private", False) and v.module == kernel.module]
    return names


def unsupported_reason(kernel: ir.Kernel, hybrid: bool = False) -> str:
    """Why the harness cannot drive this kernel ('' if it can). ``hybrid``: the modern
    program is the Fortran driver too (``harness/hybrid.py``), which can take an array result."""
    if getattr(kernel, "host", None):
        return (f"{kernel.name} is an internal procedure of {kernel.host}: the reference driver cannot call it "
                "from outside its host (it must be outlined first, which the hybrid mode does)")
    if kernel.commons:
        from ..translate.common_blocks import blocks
        from ..translate.symbols import Refusal
        try:
            blocks(kernel)
        except Refusal as r:  # the harness lays COMMON blocks out as C structs too
            return f"line {r.diagnostic.line}: {r.diagnostic.message}"
    if private_names(kernel) and public_source(kernel.file, kernel) is None:
        return (f"{kernel.name} is PRIVATE in module {kernel.module} by a statement naming it: no code outside "
                "the module can call it, the reference driver included (make it PUBLIC to port it)")
    for a in kernel.args:
        if a.ftype.base == "character" and a.rank and a.ftype.char_len is None:
            return f"argument {a.name}: arrays of assumed-length strings (character*(*)) are not supported by the harness"
        if a.ftype.base != "character" and (a.ftype.base, a.ftype.kind) not in C_TYPES:
            return f"argument {a.name}: type {a.ftype} is not supported by the harness"
        if a.optional:
            return f"argument {a.name}: OPTIONAL arguments are not supported by the harness"
    if kernel.result is not None:
        t = kernel.result.ftype
        if kernel.result.dims and not hybrid:
            return "array-valued function results are driven only through the Fortran driver of a hybrid port"
        if kernel.result.dims and not kernel.module:
            return "an external function returning an array: the driver needs an explicit interface (a module's)"
        if string_result(kernel) is not None:  # the caller's buffer, sized per case (harness/strlen.py)
            return result_length_reason(kernel)
        if t.base in ("character", "complex") or (t.base == "logical" and t.kind != 4):
            return f"function result of type {t} is not supported by the harness"
    return ""


# --------------------------------------------------------------------------- Fortran


def _f_type(t: ir.FType, array: bool = False) -> str:
    """The driver's type of a value of type ``t``; a string array of its declared length."""
    if t.base == "character":
        return f"character(len={t.char_len})" if array and t.char_len is not None else "character(len=:)"
    return f"{t.base}({t.kind})"


def _write_array(v: str, rank: int, tc: int) -> str:
    """The driver's lines writing the array ``v`` as an output record (header, then data)."""
    return (f"  call pf_whdr(u, {rank}_8, int(lbound({v}), 8), int(ubound({v}), 8), {tc}_8, &\n"
            f"    int(storage_size({v}) / 8, 8) * size({v}, kind=8))\n  write(u) {v}")


def fortran_driver(kernel: ir.Kernel) -> str:
    """The reference driver: ``use``s the kernel's module if any, else calls it external.
    Every line within free form's 132 columns (``fortran_lines``)."""
    k = kernel.name
    decl, read, write, save, restore, checks = [], [], [], [], [], []
    actual = []
    decl += members.fortran_decls(kernel)  # COMMON members: read into the block, not passed
    for a in kernel.args:
        v = f"a_{a.name}"
        tc = type_code(a.ftype)
        if members.is_member(a) and a.allocatable:  # an allocatable module array: allocated here
            colons = ",".join(":" for _ in range(a.rank))
            bounds = ", ".join(f"lb({d + 1}):ub({d + 1})" for d in range(a.rank))
            if a.intent != "in":
                decl.append(f"  {_f_type(a.ftype)}, allocatable :: s_{a.name}({colons})")
            read.append(f"  call pf_rhdr(u, '{a.name}', {a.rank}, nd, lb, ub, tc, nb)\n"
                        f"  if (allocated({v})) deallocate({v})\n  allocate({v}({bounds}))\n  read(u) {v}")
            write.append(_write_array(v, a.rank, tc))
        elif members.is_member(a):
            shape = "(" + ", ".join(f"{d.lower.value}:{d.upper.value}" for d in a.dims) + ")" if a.rank else ""
            if a.intent != "in":
                decl.append(f"  {_f_type(a.ftype)} :: s_{a.name}{shape}")
            read.append(f"  call pf_rhdr(u, '{a.name}', {a.rank}, nd, lb, ub, tc, nb)\n  read(u) {v}")
            if a.rank:
                write.append(_write_array(v, a.rank, tc))
            else:
                write.append(f"  call pf_whdr(u, 0_8, zero, zero, {tc}_8, int(storage_size({v}) / 8, 8))\n"
                             f"  write(u) {v}")
        elif a.rank == 0:
            actual.append(v)
            if a.ftype.base == "character":
                decl.append(f"  character(len=:), allocatable :: {v}, s_{a.name}")
                read.append(f"  call pf_rhdr(u, '{a.name}', 0, nd, lb, ub, tc, nb)\n"
                            f"  allocate(character(len=nb) :: {v})\n  read(u) {v}")
                write.append(f"  call pf_whdr(u, 0_8, zero, zero, {tc}_8, int(len({v}), 8))\n  write(u) {v}")
            else:
                decl.append(f"  {_f_type(a.ftype)} :: {v}, s_{a.name}")
                read.append(f"  call pf_rhdr(u, '{a.name}', 0, nd, lb, ub, tc, nb)\n  read(u) {v}")
                write.append(f"  call pf_whdr(u, 0_8, zero, zero, {tc}_8, int(storage_size({v}) / 8, 8))\n"
                             f"  write(u) {v}")
        elif a.ftype.base == "character" or a.allocatable or getattr(a, "pointer", False):
            actual.append(v)
            colons = ",".join(":" * 1 for _ in range(a.rank))
            bounds = ", ".join(f"lb({d + 1}):ub({d + 1})" for d in range(a.rank))
            decl.append(f"  {_f_type(a.ftype, True)}, allocatable :: {v}({colons}), s_{a.name}({colons})")
            read.append(f"  call pf_rhdr(u, '{a.name}', {a.rank}, nd, lb, ub, tc, nb)\n"
                        f"  allocate({v}({bounds}))\n  read(u) {v}")
            write.append(_write_array(v, a.rank, tc))
        else:  # in the middle of a guarded byte store (pf_harness_io: pf_gbytes, pf_gbyte)
            actual.append(v)
            colons = ",".join(":" * 1 for _ in range(a.rank))
            bounds = ", ".join(f"lb({d + 1}):ub({d + 1})" for d in range(a.rank))
            g, t = f"g_{a.name}", f"t_{a.name}"
            decl.append(f"  {_f_type(a.ftype)}, pointer, contiguous :: {v}({colons}), {t}(:)")
            decl.append(f"  integer(int8), allocatable, target :: {g}(:)")
            decl.append(f"  {_f_type(a.ftype)}, allocatable :: s_{a.name}({colons})")
            read.append(f"  call pf_rhdr(u, '{a.name}', {a.rank}, nd, lb, ub, tc, nb)\n"
                        f"  n = max(0_int64, product(ub(1:{a.rank}) - lb(1:{a.rank}) + 1))\n"
                        f"  allocate({g}(nb + 2 * pf_gbytes))\n  {g} = pf_gbyte\n"
                        f"  call c_f_pointer(c_loc({g}(pf_gbytes + 1)), {t}, [n])\n"
                        f"  {v}({bounds}) => {t}\n  read(u) {v}")
            checks.append(f"    call pf_guard_bad('{a.name}', any({g}(1:pf_gbytes) /= pf_gbyte), &\n"
                          f"      any({g}(size({g}) - pf_gbytes + 1:) /= pf_gbyte))")
            write.append(_write_array(v, a.rank, tc))
        if a.intent != "in":
            save.append(f"  s_{a.name} = {v}")
            restore.append(f"    {v} = s_{a.name}")
    args = ", ".join(actual)
    use = f"  use {kernel.module}, only: {k}\n" if kernel.module else ""
    use += "".join(line + "\n" for line in members.fortran_module_uses(kernel))  # driven module variables
    if kernel.result is not None:
        rt = kernel.result.ftype
        tc = type_code(rt)
        strres = string_result(kernel) is not None
        rank = len(kernel.result.dims)
        if rank:  # allocated by the assignment, to the function's result shape
            decl.append(f"  {_f_type(rt)}, allocatable :: r_result({','.join(':' for _ in range(rank))})")
        else:
            decl.append(f"  {_f_type(rt)}{', allocatable' if strres else ''} :: r_result")
        if not kernel.module:  # a string result of an external function: of constant length (strlen.py)
            decl.append(f"  {f'character(len={rt.char_len})' if strres else _f_type(rt)}, external :: {k}")
        call = f"r_result = {k}({args})"
        size = "int(len(r_result), 8)" if strres else "int(storage_size(r_result) / 8, 8)"
        write.append(_write_array("r_result", rank, tc) if rank else
                     f"  call pf_whdr(u, 0_8, zero, zero, {tc}_8, {size})\n  write(u) r_result")
    else:
        if not kernel.module:
            decl.append(f"  external :: {k}")
        call = f"call {k}({args})"
    nl = "\n"
    return wrap_free_source(f"""\
! Generated by port-fortran: reference driver for {k} (do not edit).
program pf_ref_driver
  use iso_fortran_env, only: int8, int64, real64
  use iso_c_binding, only: c_f_pointer, c_loc
  use pf_harness_io
{use}  implicit none
  integer(int64) :: nd, lb(7), ub(7), tc, nb, zero(1), n
  integer :: u, r, nwarm, nrep
  character(len=4096) :: mode, fin, arg3, arg4
  real(real64) :: t0, t1
{nl.join(decl)}
  zero = 0
  call get_command_argument(1, mode)
  call get_command_argument(2, fin)
  call get_command_argument(3, arg3)
  open(newunit=u, file=trim(fin), access='stream', form='unformatted', status='old', action='read')
{nl.join(read)}
  close(u)
  if (trim(mode) == 'run') then
    {call}
{nl.join(checks)}
    open(newunit=u, file=trim(arg3), access='stream', form='unformatted', status='replace', action='write')
{nl.join(write)}
    close(u)
  else
    call get_command_argument(4, arg4)
    read(arg3, *) nwarm
    read(arg4, *) nrep
{nl.join(save)}
    do r = 1, nwarm + nrep
{nl.join(restore)}
      t0 = pf_now()
      {call}
      t1 = pf_now()
      if (r > nwarm) write(*, '(a,es24.16)') 'PF_TIME ', t1 - t0
    end do
  end if
end program pf_ref_driver
""")


# --------------------------------------------------------------------------- C++


def c_type(t: ir.FType) -> str:
    if t.base == "character":
        return "char"
    return C_TYPES[(t.base, t.kind)]


def cpp_prototype(kernel: ir.Kernel, entry: str | None = None) -> str:
    entry = entry or f"{kernel.name}_kokkos"
    params = []
    for a in kernel.args:
        if members.is_member(a):
            continue
        params.append(c_type(a.ftype) if a.value and a.rank == 0 else f"{c_type(a.ftype)}*")
    params += ["std::size_t" for _ in _string_args(kernel)]  # the hidden lengths, trailing
    if string_result(kernel) is not None:  # the result's buffer and length, leading
        params = ["char*", "std::size_t"] + params
    ret = c_type(kernel.result.ftype) if kernel.result is not None and string_result(kernel) is None else "void"
    return f'extern "C" {ret} {entry}({", ".join(params)});'


def _string_args(kernel: ir.Kernel) -> list:
    """The CHARACTER dummies passed with a trailing length (translate/render.string_args)."""
    return [a for a in kernel.args if not members.is_member(a) and not a.rank and a.ftype.base == "character"
            and a.ftype.char_len != 1]


def cpp_driver(kernel: ir.Kernel, views_timer: bool = False) -> str:
    """The port driver. With ``views_timer`` it also links ``pf_time_views`` (from the
    generated ``views_timer.cpp``) for kernel-only timing (``time-views`` mode)."""
    n = len(kernel.args) + (1 if kernel.result is not None else 0)
    actual = []
    common_protos, load, store = members.cpp_common_calls(kernel)
    for i, a in enumerate(kernel.args):
        if members.is_member(a):
            continue
        ptr = f"static_cast<{c_type(a.ftype)}*>(R[{i}].p())"
        actual.append(f"*{ptr}" if a.value and a.rank == 0 else ptr)
    actual += [f"static_cast<std::size_t>(R[{kernel.args.index(a)}].nbytes)" for a in _string_args(kernel)]
    if string_result(kernel) is not None:
        r = len(kernel.args)
        actual = [f"static_cast<char*>(R[{r}].p())", f"static_cast<std::size_t>(R[{r}].nbytes)"] + actual
    call = f"{kernel.name}_kokkos({', '.join(actual)})"
    if kernel.result is not None and string_result(kernel) is None:
        call = f"*static_cast<{c_type(kernel.result.ftype)}*>(R[{len(kernel.args)}].p()) = {call}"
    mutable = [i for i, a in enumerate(kernel.args) if a.intent != "in"]
    names = [a.name for a in kernel.args] + (["result"] if kernel.result is not None else [])
    names_init = ", ".join(f'"{x}"' for x in names)
    nl = "\n"
    if load:  # COMMON members: records -> the Fortran-owned blocks before the call, back after
        call = load + "\n      " + call + ";\n      " + store
    views_decl = 'extern "C" int pf_time_views(std::vector<pf_harness::Rec>&, int, int);' if views_timer else ""
    views_mode = ("  } else if (mode == \"time-views\") {\n"
                  "    rc = pf_time_views(R, std::atoi(argv[3]), std::atoi(argv[4]));\n") if views_timer else ""
    return f"""\
// Generated by port-fortran: port driver for {kernel.name} (do not edit).
#include <Kokkos_Core.hpp>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include "pf_harness_io.hpp"

{cpp_prototype(kernel)}
{nl.join(common_protos)}
{views_decl}

int main(int argc, char** argv) {{
  if (argc < 4) pf_harness::die("usage: pf_driver run IN OUT | time IN WARMUP REPEATS");
  int kargc = 1;
  bool own = !Kokkos::is_initialized();
  if (own) Kokkos::initialize(kargc, argv);
  int rc = 0;
  {{
    std::string mode = argv[1];
    std::vector<pf_harness::Rec> R = pf_harness::read_all(argv[2], {n});
    static const char* const names[] = {{{names_init}}};
    if (mode == "run") {{
      {call};
      pf_harness::check_guards(R, names);
      pf_harness::write_all(argv[3], R);
    }} else if (mode == "time") {{
      if (argc < 5) pf_harness::die("time needs WARMUP REPEATS");
      int nwarm = std::atoi(argv[3]), nrep = std::atoi(argv[4]);
      std::vector<pf_harness::Rec> S = R;
      const int mutable_args[] = {{{", ".join(str(i) for i in mutable) or "-1"}}};
      for (int r = 0; r < nwarm + nrep; ++r) {{
        for (int i : mutable_args)
          if (i >= 0) std::memcpy(R[i].p(), S[i].p(), R[i].nbytes);
        double t0 = pf_harness::now();
        {call};
        double t1 = pf_harness::now();
        if (r >= nwarm) std::printf("PF_TIME %.17g\\n", t1 - t0);
      }}
      pf_harness::check_guards(R, names);
{views_mode}    }} else {{
      pf_harness::die("unknown mode " + mode);
    }}
  }}
  if (own && Kokkos::is_initialized()) Kokkos::finalize();
  return rc;
}}
"""


def driver_cmake(kernel: ir.Kernel, port_dir: str, support_dir: str, extra_sources: list[str] = (),
                 link_libraries: list[str] = ()) -> str:
    """CMake project: the port (add_subdirectory) + the driver executable ``pf_driver``,
    linked with ``link_libraries`` too (the original objects the routine needs, as a static
    library, and the Fortran run-time: what the port's host code may call). A ``.f90``
    among ``extra_sources`` (the COMMON owner, ``members.fortran_common_owner``) enables
    Fortran in the project."""
    srcs = " ".join(["pf_driver.cpp", *extra_sources])
    fortran = "enable_language(Fortran)\n" if any(x.endswith(".f90") for x in extra_sources) else ""
    libs = "".join(f' "{x}"' if not x.startswith("-") else f" {x}" for x in link_libraries)
    return f"""\
# Generated by port-fortran: harness project for {kernel.name} (do not edit).
cmake_minimum_required(VERSION 3.16)
project(pf_harness_{kernel.name} CXX)
{fortran}find_package(Kokkos REQUIRED)
if(PF_BACKEND)
  string(TOUPPER "${{PF_BACKEND}}" _pf_b)
  add_compile_definitions(PF_BACKEND_${{_pf_b}})
endif()
add_subdirectory("{port_dir}" port)
add_executable(pf_driver {srcs})
target_include_directories(pf_driver PRIVATE "{support_dir}" "{port_dir}")
target_link_libraries(pf_driver PRIVATE {kernel.name}_kokkos Kokkos::kokkos{libs})
"""
