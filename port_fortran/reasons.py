"""Reason codes: every code a diagnostic, a refusal, a kept loop or a kernel's outcome may
carry, defined once with its meaning (the registry, in the manner of PSyclone's
``DTCode``). Machines read the code, people the message that comes with it; the meaning
here is what the code always stands for.

``interface``: the reason is about the routine's interface or the state it shares (its
arguments' kinds, COMMON, module variables, SAVE, I/O...): a port written by anyone, an LLM
too, could not be called in the routine's place nor driven by the harness, so the model
chain stops there (``pipeline/nodes.py``). Every other refusal is about how the rules
translate the body, which another model may do better.

``tests/test_reasons.py`` checks that every code the package emits is registered here.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reason:
    code: str
    meaning: str
    stage: str  # who emits it: front-end, analysis, translate, hybrid, validate, build, harness, pipeline
    interface: bool = False


def _r(stage: str, interface: bool = False, **codes: str) -> list[Reason]:
    # keyword names: '_' for '-', a trailing '_' for a Python keyword (return_)
    return [Reason(code.rstrip("_").replace("_", "-"), meaning, stage, interface) for code, meaning in codes.items()]


_ALL = [
    # ---------------------------------------------------------------- the front end (fortran/)
    *_r("front-end",
        syntax_error="the file is not Fortran fparser can read (the message names the line)",
        coarray="coarray Fortran (a codimension): the parser reads Fortran 2008 without coarrays",
        parse_error="the parser gave up (nesting too deep, an internal fparser error)",
        parse_timeout="parsing the program unit took longer than its CPU limit",
        analysis_timeout="analysing the program unit took longer than its CPU limit",
        read_error="the file could not be prepared (preprocessing, include lines)",
        unreadable="the file could not be read",
        preprocessor_error="the C preprocessor (gfortran -E -cpp) failed on a line",
        internal_error="a bug of port-fortran (a visitor or a stage failed), never a limit of the code",
        unsupported_construct="a Fortran form the IR does not model (kept as Unsupported with its line)",
        derived_type="derived types and their components are not modelled",
        pointer="POINTER / TARGET variables are not modelled",
        cray_pointer="Cray POINTER (p, buf) is not modelled",
        equivalence="EQUIVALENCE: names sharing storage",
        statement_function="a statement function that cannot be inlined (its type, or a reference that does not match it)",
        unknown_kind="a KIND that cannot be known (its module or constant is missing)",
        unknown_module="a USEd module found in no file given",
        unresolved_parameter="a PARAMETER whose value the front end cannot evaluate",
        untyped="a name with no type under IMPLICIT NONE",
        host_association="an internal procedure uses its host's variables",
        internal_procedure="an internal procedure (CONTAINed) is listed with its host",
        analysis_error="an analysis step failed on this routine (a bug; the routine keeps safer facts)",
        stop="STOP ends the program (the routine is not a function of its arguments)",
        impure_call="a callee with effects beyond its arguments (I/O, STOP, SAVE, COMMON, module state)",
        call_to_unknown="a called routine no file defines (external, generic or a module array)",
        intrinsic_call="an intrinsic subroutine called where only its effects on arguments can be modelled",
        recursion="a routine that calls itself, directly or through others",
        extent_from_config="an assumed-size extent taken from the configuration (routines.<k>.args)",
        extent_from_call_sites="an assumed-size extent taken from the actual arguments at every call site",
        extent_unknown="an assumed-size extent no subscript, configuration or call site bounds"),
    *_r("front-end", interface=True,
        io_in_kernel="an I/O statement (READ, WRITE, OPEN...) inside the routine",
        entry="an ENTRY statement: the routine has several entry points"),
    # ---------------------------------------------------------------- loop analysis (dependence)
    *_r("analysis",
        loop_carried_dependence="an iteration writes what another reads or writes (exact test)",
        possible_dependence="iterations may touch the same element (the subscripts cannot be told apart)",
        conditional_independence="iterations are independent only for some run-time values (versioned)",
        scalar_dependence="a scalar carries a value from one iteration to the next",
        last_value="a scalar assigned in the loop is used after it",
        loc_reduction="a MIN/MAX with its location, whose ties depend on the order",
        scattered_update="updates through an index array may collide",
        indirect_write="a write through an index array",
        induction_variable="a scalar stepped each iteration (rewritten in closed form when possible)",
        early_exit="the loop can leave before its last iteration (EXIT, GOTO out, RETURN)",
        call_in_loop="a call whose effects the analysis cannot confine to its arguments",
        io_in_loop="I/O inside the loop",
        unsupported_in_loop="a construct the IR does not model inside the loop",
        loop_variable_modified="the DO variable is assigned in the body",
        not_parallel="the loop is serial (its analysis gave no other reason)"),
    # ---------------------------------------------------------------- the rules translator
    *_r("translate", interface=True,
        common_block="a COMMON block whose layout cannot be matched for sure",
        module_variable="module variables: shared state the port cannot reach",
        optional_argument="an OPTIONAL argument",
        assumed_shape="an assumed-shape or allocatable argument (needs an array descriptor)",
        array_result="a function whose result is an array (a C++ entry returns one value)",
        unsupported_type="an argument or variable type the port cannot pass (CHARACTER, unusual kinds)",
        allocatable="an ALLOCATABLE local",
        save_variable="a local that keeps its value between calls (SAVE, DATA, initialised)",
        unknown_extent="an array whose extent the entry cannot know"),
    *_r("translate",
        array_expression="an array expression the lowering cannot turn into loops",
        array_overlap="an array assignment whose two sides may overlap",
        array_section="an array section passed to a callee that is not contiguous (Fortran passes a copy)",
        string_in_kernel="a CHARACTER string in a statement that also touches arrays (strings stay on the host)",
        array_shape="array expressions of shapes that cannot be matched",
        automatic_array="an automatic array in a device function",
        unsupported_expression="an expression form the C++ printer does not handle",
        unsupported_intrinsic="an intrinsic without a C++ translation",
        unsupported_literal="a literal without a C++ spelling",
        unsupported_loop="a loop form the printer does not handle",
        unsupported_section="an array section form the lowering does not handle",
        unsupported_where="a WHERE form the lowering does not handle",
        unstructured_goto="a GOTO that is not a loop, an exit or a forward skip",
        unstructured_exit="a jump out of a parallel loop that cannot be expressed",
        loop_bound_modified="a DO bound assigned in the body",
        private_array="an array that would have to be private to each iteration",
        stop_in_kernel="STOP inside a parallel loop",
        unknown_name="a name the symbol table does not know",
        type_mismatch="a value used as another type than it has",
        rank_mismatch="an array referenced with the wrong number of subscripts",
        intent_mismatch="an argument a callee may write passed where it must not change"),
    # ---------------------------------------------------------------- the hybrid mode (kept loops, outlining)
    *_r("hybrid", interface=True,
        no_parallel_nest="no loop nest of the routine can be outlined as a Kokkos kernel"),
    *_r("hybrid",
        kept_serial="a serial loop stays Fortran",
        call="a CALL stays a Fortran call in the hybrid routine",
        goto="a jump (GO TO, arithmetic IF) stays Fortran control flow",
        # 'stop' (a STOP that stays Fortran) is the front end's code
        return_="RETURN stays Fortran control flow",
        do_while="a DO WHILE stays Fortran (its trip count is not known in advance)",
        equivalence_aliasing="the nest touches names that share storage (EQUIVALENCE)",
        goto_into_nest="a jump from outside lands inside the nest",
        not_parallel_outlined="outlined, the nest would run as a single iteration",
        nest_not_in_source="the nest's lines are not in the file as the IR has them",
        shared_line="a line of the nest holds another statement (';')",
        preprocessor_in_nest="a preprocessor line inside the nest",
        openmp_region="the nest is inside an OpenMP parallel region",
        small_nest="a nest of few iterations (a compile-time constant) inside another loop stays Fortran: a launch "
                   "each time costs more than the loop",
        loop_directive_removed="the OpenMP/OpenACC directive of a loop kept in Fortran around outlined nests is removed",
        openmp_region_removed="an OpenMP parallel region around outlined nests runs as its serial code (its "
                              "directives removed): the nests are Kokkos kernels",
        not_exercised="the program's run never reached the nest, so its proof could not cover a port of it"),
    # ---------------------------------------------------------------- the validator (any port's C++)
    *_r("validate",
        no_code="the answer holds no C++",
        missing_entry="the port does not define the required entry",
        calls_original="the port calls the original Fortran routine",
        file_io="the port reads or writes files",
        hard_coded_output="the port holds tables of numbers (results hard-coded)"),
    # ---------------------------------------------------------------- builds
    *_r("build",
        cmake_error="CMake failed to configure the port",
        compile_error="the C++ compiler rejected the port",
        compile_warning="a compiler warning",
        link_error="the port did not link",
        build_failed="the build failed without a diagnostic the parser recognises"),
    # ---------------------------------------------------------------- the harness
    *_r("harness", interface=True,
        harness_unsupported="the harness cannot call the routine (its interface)",
        module_state="module state the harness cannot set (allocatable, CHARACTER, non-constant bounds)"),
    *_r("harness",
        original_not_finite="the original returned inf/NaN on every input drawn: the port is not at fault",
        original_failed="the original failed on every input drawn: the port is not at fault",
        original_limit="the original ran past the case's time or memory limit on the inputs drawn (a loop bound "
                       "read from data it does not accept): the port is not at fault",
        original_no_effect="on every input drawn the original left all its outputs as they were given: the "
                           "comparison would prove nothing (loops that run zero times, a value that skips the work)",
        original_out_of_bounds="the original reads or writes outside its declared arrays on the inputs drawn "
                               "(gfortran -fcheck=bounds): its outputs are undefined, the port is not at fault",
        original_uninitialised="the original's outputs change with the values its uninitialised locals hold "
                               "(gfortran -finit-real=snan): it reads variables it never set, the port is not at fault",
        inputs_too_large="every draw of a case asked for more array data than a case may take (an exponent or "
                         "a large scalar in an array bound): the port is not at fault",
        proof_over_budget="the proof would pass the kernel's time budget (limits.proof_s): the original is slow on "
                          "the inputs it takes (compile-time extents, work its inputs select); the message gives "
                          "the times",
        wrong_result="the port's outputs differ from the original's",
        run_error="the port's driver failed or was stopped"),
    # ---------------------------------------------------------------- main programs of a run (pipeline/program_job.py)
    *_r("harness",
        program_not_exercised="the program's run (its configured arguments and inputs) reached none of the ported "
                              "loop nests, so it proves nothing about them",
        program_not_proven="an internal procedure of a main program whose proof did not pass (the row of the "
                           "program says why)",
        original_nondeterministic="the original program's output changes between two runs of it (uninitialised memory, "
                                  "timing): its output cannot prove a port",
        original_build_failed="the original program does not build from the files of the tree (a library it needs "
                              "is not given)",
        modern_build_failed="the modern program (hybrid source and Kokkos library) does not build"),
    # ---------------------------------------------------------------- whole applications (app/)
    *_r("app",
        hybrid_source_moved="the hybrid port was made from another copy of the source than the application builds",
        no_executable_part="the routine has no executable statement to replace by a call of its port",
        routine_not_in_source="the routine's lines are not where the program model says (the file changed)",
        preprocessor_spans="a preprocessor conditional spans the routine's declarations and statements",
        internal_procedures="the routine contains internal procedures, which a port cannot replace in place",
        overlapping_edits="two edits of the modern source overlap"),
    # ---------------------------------------------------------------- the pipeline
    *_r("pipeline",
        refused="the translator refused (the message says why)",
        no_scaffold="no scaffold (header, module, CMake) for an LLM port",
        budget_reached="the LLM budget is spent",
        llm_error="an LLM call failed",
        load_error="the kernel could not be loaded",
        stage_error="a stage itself failed (a bug, not the port)",
        config_error="the configuration cannot be used (e.g. a model needing a key nobody set)",
        recursion_limit="the graph ran out of steps",
        worker_error="a worker process died",
        executor_error="the executor refused the job",
        translate_failed="a port failed at translation (debug rounds used up)",
        validate_failed="a port failed validation (debug rounds used up)",
        compile_failed="a port failed to build (debug rounds used up)",
        run_failed="a port failed the differential test (debug rounds used up)"),
]

REASONS: dict[str, Reason] = {}
for _reason in _ALL:
    if _reason.code in REASONS:
        raise AssertionError(f"reason code {_reason.code} defined twice")
    REASONS[_reason.code] = _reason

INTERFACE_CODES = frozenset(c for c, r in REASONS.items() if r.interface)


def reason(code: str) -> Reason:
    """The registered reason; ValueError naming the code for one nobody registered."""
    try:
        return REASONS[code]
    except KeyError:
        raise ValueError(f"reason code {code!r} is not registered in port_fortran/reasons.py") from None


def meaning(code: str) -> str:
    """What ``code`` stands for ('' for no code or one that is not registered)."""
    r = REASONS.get(code or "")
    return r.meaning if r is not None else ""


def is_interface(codes) -> bool:
    """Whether every code of ``codes`` (at least one) is about the interface."""
    codes = set(codes)
    return bool(codes) and codes <= INTERFACE_CODES
