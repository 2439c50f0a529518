"""The intrinsic modules as gfortran provides them: ``iso_fortran_env``, ``iso_c_binding``
and the kinds and common functions of ``omp_lib``, as :class:`ir.ModuleInterface` records
(the same form a module from another file takes), so ``real(kind=REAL64)`` or
``integer(c_int)`` get their compiler kinds. Values are gfortran's on x86-64 Linux
(``c_long_double`` is 16 bytes on aarch64; the front end does not model that kind)."""
from __future__ import annotations

from . import ir
from .ir import FType

_ISO_FORTRAN_ENV_INT = {
    "int8": 1, "int16": 2, "int32": 4, "int64": 8,
    "real32": 4, "real64": 8, "real128": 16,
    "character_storage_size": 8, "numeric_storage_size": 32, "file_storage_size": 8,
    "input_unit": 5, "output_unit": 6, "error_unit": 0, "iostat_end": -1, "iostat_eor": -2,
    "iostat_inquire_internal_unit": 5018, "atomic_int_kind": 4, "atomic_logical_kind": 4,
    "current_team": -1, "initial_team": -2, "parent_team": -3,
}
_ISO_FORTRAN_ENV_ARRAYS = {
    "integer_kinds": [1, 2, 4, 8, 16], "real_kinds": [4, 8, 10, 16], "logical_kinds": [1, 2, 4, 8, 16],
    "character_kinds": [1, 4],
}
_ISO_C_BINDING_INT = {
    "c_int": 4, "c_short": 2, "c_long": 8, "c_long_long": 8, "c_signed_char": 1, "c_size_t": 8,
    "c_int8_t": 1, "c_int16_t": 2, "c_int32_t": 4, "c_int64_t": 8, "c_int128_t": 16,
    "c_int_least8_t": 1, "c_int_least16_t": 2, "c_int_least32_t": 4, "c_int_least64_t": 8,
    "c_int_fast8_t": 1, "c_int_fast16_t": 8, "c_int_fast32_t": 8, "c_int_fast64_t": 8,
    "c_intmax_t": 8, "c_intptr_t": 8, "c_ptrdiff_t": 8,
    "c_float": 4, "c_double": 8, "c_long_double": 10, "c_float128": 16,
    "c_float_complex": 4, "c_double_complex": 8, "c_long_double_complex": 10, "c_float128_complex": 16,
    "c_bool": 1, "c_char": 1,
}
_ISO_C_BINDING_CHARS = {
    "c_null_char": "\0", "c_alert": "\a", "c_backspace": "\b", "c_form_feed": "\f", "c_new_line": "\n",
    "c_carriage_return": "\r", "c_horizontal_tab": "\t", "c_vertical_tab": "\v",
}
_OMP_LIB_INT = {
    "omp_lock_kind": 4, "omp_nest_lock_kind": 8, "omp_sched_kind": 4, "omp_proc_bind_kind": 4,
    "omp_lock_hint_kind": 4, "omp_sync_hint_kind": 4, "omp_integer_kind": 4, "omp_logical_kind": 4,
    "omp_real_kind": 4, "omp_sched_static": 1, "omp_sched_dynamic": 2, "omp_sched_guided": 3,
    "omp_sched_auto": 4, "openmp_version": 201511,
}
_OMP_LIB_FUNCTIONS = {
    "omp_get_wtime": ir.REAL8, "omp_get_wtick": ir.REAL8, "omp_get_num_threads": ir.INTEGER,
    "omp_get_max_threads": ir.INTEGER, "omp_get_thread_num": ir.INTEGER, "omp_get_num_procs": ir.INTEGER,
    "omp_in_parallel": ir.LOGICAL, "omp_get_dynamic": ir.LOGICAL, "omp_get_nested": ir.LOGICAL,
    "omp_get_level": ir.INTEGER, "omp_get_active_level": ir.INTEGER, "omp_get_thread_limit": ir.INTEGER,
    "omp_get_num_devices": ir.INTEGER, "omp_get_default_device": ir.INTEGER, "omp_is_initial_device": ir.LOGICAL,
    "omp_get_team_num": ir.INTEGER, "omp_get_num_teams": ir.INTEGER, "omp_test_lock": ir.LOGICAL,
}
_OMP_LIB_SUBROUTINES = ("omp_set_num_threads", "omp_set_dynamic", "omp_set_nested", "omp_init_lock",
                        "omp_destroy_lock", "omp_set_lock", "omp_unset_lock", "omp_set_schedule",
                        "omp_set_default_device", "omp_init_nest_lock", "omp_destroy_nest_lock",
                        "omp_set_nest_lock", "omp_unset_nest_lock")


def _constants(iface: ir.ModuleInterface, values: dict, ftype: FType) -> None:
    for name, v in values.items():
        t = FType("character", 1, len(v)) if isinstance(v, str) else ftype
        iface.variables[name] = ir.Variable(name, t, parameter=v, module=iface.name)
        iface.constants.append(name)


def _iso_fortran_env() -> ir.ModuleInterface:
    m = ir.ModuleInterface("iso_fortran_env", intrinsic=True)
    _constants(m, _ISO_FORTRAN_ENV_INT, ir.INTEGER)
    for name, vals in _ISO_FORTRAN_ENV_ARRAYS.items():
        dims = [ir.Dim(ir.Literal(1, ftype=ir.INTEGER), ir.Literal(len(vals), ftype=ir.INTEGER))]
        m.variables[name] = ir.Variable(name, ir.INTEGER, dims, parameter=list(vals), module=m.name)
        m.constants.append(name)
    m.procedures.update({"compiler_version": FType("character", 1, None),
                         "compiler_options": FType("character", 1, None)})
    return m


def _iso_c_binding() -> ir.ModuleInterface:
    m = ir.ModuleInterface("iso_c_binding", intrinsic=True)
    _constants(m, _ISO_C_BINDING_INT, ir.INTEGER)
    _constants(m, _ISO_C_BINDING_CHARS, ir.INTEGER)
    m.derived_types += ["c_ptr", "c_funptr"]
    m.procedures.update({"c_loc": None, "c_funloc": None, "c_associated": ir.LOGICAL, "c_sizeof": ir.INTEGER8,
                         "c_f_pointer": None, "c_f_procpointer": None})
    return m


def _omp_lib() -> ir.ModuleInterface:
    m = ir.ModuleInterface("omp_lib", intrinsic=True)
    _constants(m, _OMP_LIB_INT, ir.INTEGER)
    m.procedures.update(_OMP_LIB_FUNCTIONS)
    m.procedures.update({name: None for name in _OMP_LIB_SUBROUTINES})
    return m


_BUILDERS = {"iso_fortran_env": _iso_fortran_env, "iso_c_binding": _iso_c_binding, "omp_lib": _omp_lib}


def intrinsic_module(name: str) -> ir.ModuleInterface | None:
    """The interface of an intrinsic module (a fresh copy), or None."""
    b = _BUILDERS.get(name.lower())
    return b() if b else None


def is_intrinsic_module(name: str) -> bool:
    return name.lower() in _BUILDERS
