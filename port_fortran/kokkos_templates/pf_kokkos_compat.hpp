// pf_kokkos_compat.hpp -- written by port-fortran; the same file in every port.
//
// Everything that differs between Kokkos 3.4 and 5.x lives here, so the generated kernels
// use one spelling:
//   * pf::ExecSpace / pf::MemSpace, chosen by the compile definition PF_BACKEND_SERIAL,
//     PF_BACKEND_OPENMP, PF_BACKEND_CUDA or PF_BACKEND_HIP (default: Kokkos' default space);
//   * pf::ensure_initialized(): initialises Kokkos on first use when the calling program has
//     not, and finalizes it at exit;
//   * math usable in device code (Kokkos 3.x keeps it in Kokkos::Experimental, 4.x+ in
//     Kokkos::), plus the Fortran intrinsics C++ lacks: integer powers, SIGN, MOD, MODULO,
//     NINT, AINT, ANINT, MIN/MAX;
//   * the range policies with Fortran's inclusive upper bounds (an empty range when hi < lo);
//   * pf::parallel_for / parallel_reduce / parallel_scan / single_for / DevScalar: Kokkos' own on
//     device backends, plain loops the compiler vectorises on the host backends ("host loops");
//   * pf::FArray, the array dummies of device functions (callees of a kernel);
//   * PF_VOLATILE_JOIN for reducers (Kokkos 3.x also calls a volatile join);
//   * to_device / from_device: the entries' array arguments in pf::MemSpace, resident between
//     calls where the program registered them (pf_runtime.hpp), else copied per call;
//   * (included at the end) pf_strings.hpp, the CHARACTER string runtime.
#ifndef PF_KOKKOS_COMPAT_HPP
#define PF_KOKKOS_COMPAT_HPP

#include <Kokkos_Core.hpp>
#include <Kokkos_Complex.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#if defined(PF_BACKEND_OPENMP)
#include <omp.h>
#endif

#include "pf_runtime.hpp"

namespace pf {

// ---------------------------------------------------------------- spaces
#if defined(PF_BACKEND_CUDA)
using ExecSpace = Kokkos::Cuda;
#elif defined(PF_BACKEND_HIP)
#if KOKKOS_VERSION >= 40000
using ExecSpace = Kokkos::HIP;
#else
using ExecSpace = Kokkos::Experimental::HIP;
#endif
#elif defined(PF_BACKEND_OPENMP)
using ExecSpace = Kokkos::OpenMP;
#elif defined(PF_BACKEND_SERIAL)
using ExecSpace = Kokkos::Serial;
#else
using ExecSpace = Kokkos::DefaultExecutionSpace;
#endif
using MemSpace = ExecSpace::memory_space;

// Host arrays as the Fortran caller passes them, and their copies in MemSpace.
template <class T>
using HostView = Kokkos::View<T, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using View = Kokkos::View<T, Kokkos::LayoutLeft, MemSpace>;
// What a port's kernel function takes (the caller keeps the arrays alive for the call): a
// lambda capturing only unmanaged views is trivially copyable, so on the host g++ keeps
// its fields in registers (scalar replacement of the closure) and can vectorise a loop
// across the kernel's iterations; a managed view's reference count (branches in its copy and
// destructor) kept nbody's outer loop from vectorising ("control flow in loop").
template <class T>
using KView = Kokkos::View<T, Kokkos::LayoutLeft, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// ---------------------------------------------------------------- memory the host cannot read
// True when MemSpace is memory the host cannot address (a GPU without HMM/ATS), or when
// PF_SEPARATE_MEMORY emulates that on a host backend (every copy real, in separate
// allocations: how the modern tree's coherence is checked without a GPU).
#if defined(PF_SEPARATE_MEMORY)
inline constexpr bool separate_memory = true;
#else
inline constexpr bool separate_memory = !Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
#endif

// Device copies of registered ranges, in MemSpace.
struct KokkosMemory : DeviceMemory {
  void* allocate(std::size_t bytes) override { return Kokkos::kokkos_malloc<MemSpace>("pf_resident", bytes); }
  void deallocate(void* p) override { Kokkos::kokkos_free<MemSpace>(p); }
  void to_device(void* dev, const void* host, std::size_t bytes) override {
    Kokkos::View<char*, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> d(static_cast<char*>(dev), bytes);
    Kokkos::View<const char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(
        static_cast<const char*>(host), bytes);
    Kokkos::deep_copy(d, h);
  }
  void to_host(void* host, const void* dev, std::size_t bytes) override {
    Kokkos::View<char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(static_cast<char*>(host), bytes);
    Kokkos::View<const char*, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> d(static_cast<const char*>(dev),
                                                                                     bytes);
    Kokkos::deep_copy(h, d);
  }
};

// The registry with its device copies in MemSpace.
inline Registry& device_registry() {
  static KokkosMemory* mem = new KokkosMemory();
  Registry& r = registry();
  r.set_memory(mem);
  return r;
}

// ---------------------------------------------------------------- initialisation
inline void finalize_at_exit() {
  if (Kokkos::is_initialized()) {
    if (separate_memory) {
      Registry& r = device_registry();
      if (std::getenv("PF_RESIDENT_STATS")) r.print_counters(stderr);
      r.clear_device();  // device copies go before the device runtime does
    }
    Kokkos::finalize();
  }
}

// Initialise Kokkos when the program has not (a legacy Fortran main never does). Views
// created by the ports are local to one call and resident copies are freed first, so
// finalising at exit is safe.
inline void ensure_initialized() {
  if (!Kokkos::is_initialized()) {
    Kokkos::initialize();
    std::atexit(finalize_at_exit);
  }
}

// ---------------------------------------------------------------- array arguments of the entries
// The array a port's entry passes to its kernel for the caller's array ``h``: the caller's
// memory itself where MemSpace is host memory; else the resident device copy when the
// program registered the storage (pf_resident), else a copy made for this call.
template <class HV>
auto to_device(const HV& h) {
  if constexpr (!separate_memory) {
    return Kokkos::create_mirror_view_and_copy(MemSpace(), h);
  } else {
    using T = typename HV::data_type;
    using V = Kokkos::View<T, Kokkos::LayoutLeft, MemSpace>;
    using U = Kokkos::View<T, Kokkos::LayoutLeft, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    const std::size_t bytes = h.span() * sizeof(typename HV::value_type);
    const void* host = static_cast<const void*>(h.data());
    Registry& r = device_registry();
    if (void* d = r.device_ptr(host, bytes)) return V(U(static_cast<typename V::pointer_type>(d), h.layout()));
    r.before_copy(host, bytes);
    Kokkos::View<typename HV::non_const_data_type, Kokkos::LayoutLeft, MemSpace> d(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "pf_copy"), h.layout());
    Kokkos::deep_copy(d, h);
    return V(d);
  }
}

// After the kernel wrote ``d``, the copy of the caller's array ``h``: back to the host unless
// it is resident (then only marked as newer on the device).
template <class HV, class DV>
void from_device(const HV& h, const DV& d) {
  if constexpr (!separate_memory) {
    Kokkos::deep_copy(h, d);
  } else {
    const std::size_t bytes = h.span() * sizeof(typename HV::value_type);
    const void* host = static_cast<const void*>(h.data());
    Registry& r = device_registry();
    if (!r.device_wrote(host, bytes)) {
      Kokkos::deep_copy(h, d);
      r.after_copy_write(host, bytes);
    }
  }
}

// ---------------------------------------------------------------- private arrays
// A local array each iteration of a parallel loop fills before reading it (the dependence
// test's privatisation): one copy per iteration, declared in the kernel's body, fixed
// extents, Fortran (column-major) order, indexed from 0 like the Views.
template <class T, long... N>
struct Private {
  T elems[(N * ...)];
  // the first element, as a View's data(): a device function takes an array argument so
  KOKKOS_INLINE_FUNCTION T* data() { return elems; }
  KOKKOS_INLINE_FUNCTION const T* data() const { return elems; }
  template <class... I>
  KOKKOS_INLINE_FUNCTION static long offset(I... i) {
    static_assert(sizeof...(I) == sizeof...(N), "rank of a private array");
    const long idx[] = {static_cast<long>(i)...};
    const long ext[] = {N...};
    long off = 0;
    for (int d = static_cast<int>(sizeof...(N)) - 1; d >= 0; --d) off = off * ext[d] + idx[d];
    return off;
  }
  template <class... I>
  KOKKOS_INLINE_FUNCTION T& operator()(I... i) { return elems[offset(i...)]; }
  // read-only, as a lambda sees a copy it captured (a section reduction's result)
  template <class... I>
  KOKKOS_INLINE_FUNCTION const T& operator()(I... i) const { return elems[offset(i...)]; }
};

// A scratch array whose values matter after the loop (COMMON, a dummy, a local read later):
// each iteration works on its own Private copy, the sequentially last one on the array itself
// (every iteration writes the same elements, so the array ends as after the Fortran loop).
// Indexed like Private and like the View it may point into (constant extents, column-major).
template <class T, long... N>
struct Scratch {
  T* p;
  KOKKOS_INLINE_FUNCTION explicit Scratch(T* q) : p(q) {}
  template <class... I>
  KOKKOS_INLINE_FUNCTION T& operator()(I... i) const { return p[Private<T, N...>::offset(i...)]; }
  KOKKOS_INLINE_FUNCTION T* data() const { return p; }
};

// A Scratch whose iteration writes the same B boxes of it every time, all before reading it,
// but may read outside them (bounds the dependence test could not relate): no iteration writes
// an element outside the boxes, so there the array still holds its value from before the loop
// and is read (never written) directly; inside them, the iteration's own copy (the array
// itself in the last iteration). Box bounds are 0-based, inclusive, evaluated in the kernel.
// No data(): a pointer would lose the boxes.
template <class T, int B, long... N>
struct BoxScratch {
  static constexpr int R = static_cast<int>(sizeof...(N));
  T* p;
  T* shared;
  long lo[B][R];
  long hi[B][R];
  KOKKOS_INLINE_FUNCTION BoxScratch(T* q, T* s, const long (&l)[B][R], const long (&h)[B][R]) : p(q), shared(s) {
    for (int b = 0; b < B; ++b)
      for (int d = 0; d < R; ++d) {
        lo[b][d] = l[b][d];
        hi[b][d] = h[b][d];
      }
  }
  template <class... I>
  KOKKOS_INLINE_FUNCTION T& operator()(I... i) const {
    const long idx[] = {static_cast<long>(i)...};
    const long off = Private<T, N...>::offset(i...);
    for (int b = 0; b < B; ++b) {
      bool in = true;
      for (int d = 0; d < R; ++d) in = in && lo[b][d] <= idx[d] && idx[d] <= hi[b][d];
      if (in) return p[off];
    }
    return shared[off];
  }
};

// ---------------------------------------------------------------- policies
// Policies index with a signed type: Fortran loops may start below zero (DO i = -r, r), and
// on Kokkos' default index type, the space's unsigned size_type, a negative begin wraps and
// the loop runs no iteration at all.
using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>;
template <int R, Kokkos::Iterate It = Kokkos::Iterate::Left>
using MDRange = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<R, It, It>, Kokkos::IndexType<long>>;

// Fortran DO i = lo, hi (inclusive, empty when hi < lo).
inline Range range(long lo, long hi) { return Range(lo, hi >= lo ? hi + 1 : lo); }

// The (0, 1) range of a single-iteration kernel (serial code kept in MemSpace).
inline Range single() { return Range(0, 1); }

// Number of iterations of DO i = lo, hi, step (Fortran: max(0, (hi - lo + step) / step)).
KOKKOS_INLINE_FUNCTION long trip(long lo, long hi, long step) {
  const long n = (hi - lo + step) / step;
  return n > 0 ? n : 0;
}

// MDRangePolicy over inclusive Fortran bounds (empty where hi < lo), optional tile sizes.
template <int R, Kokkos::Iterate It = Kokkos::Iterate::Left>
inline MDRange<R, It> mdrange(const long (&lo)[R], const long (&hi)[R]) {
  using Policy = MDRange<R, It>;
  typename Policy::point_type lower, upper;
  for (int d = 0; d < R; ++d) {
    lower[d] = lo[d];
    upper[d] = hi[d] >= lo[d] ? hi[d] + 1 : lo[d];
  }
  return Policy(lower, upper);
}
template <int R, Kokkos::Iterate It = Kokkos::Iterate::Left>
inline MDRange<R, It> mdrange(const long (&lo)[R], const long (&hi)[R],
                                                                         const long (&tile)[R]) {
  using Policy = MDRange<R, It>;
  typename Policy::point_type lower, upper;
  typename Policy::tile_type tiles;
  for (int d = 0; d < R; ++d) {
    lower[d] = lo[d];
    upper[d] = hi[d] >= lo[d] ? hi[d] + 1 : lo[d];
    tiles[d] = tile[d];
  }
  return Policy(lower, upper, tiles);
}

// A tight loop nest over inclusive Fortran bounds, dimension 0 fastest, optional tile sizes:
// pf::parallel_for / pf::parallel_reduce run it as the MDRangePolicy pf::mdrange gives on
// device backends (policy()) and as plain nested loops on the host backends ("host loops"
// below). The bounds are kept here rather than read back from a policy, whose members are
// not a public interface in every Kokkos version.
template <int R>
struct Nest {
  long lo[R], hi[R], tile[R];  // inclusive Fortran bounds
  bool tiled = false;
  MDRange<R> policy() const {
    return tiled ? mdrange<R>(lo, hi, tile) : mdrange<R>(lo, hi);
  }
};
template <int R>
inline Nest<R> nest(const long (&lo)[R], const long (&hi)[R]) {
  Nest<R> m;
  for (int d = 0; d < R; ++d) {
    m.lo[d] = lo[d];
    m.hi[d] = hi[d];
    m.tile[d] = 0;
  }
  return m;
}
template <int R>
inline Nest<R> nest(const long (&lo)[R], const long (&hi)[R], const long (&tile)[R]) {
  Nest<R> m = nest<R>(lo, hi);
  for (int d = 0; d < R; ++d) m.tile[d] = tile[d];
  m.tiled = true;
  return m;
}

// ---------------------------------------------------------------- host loops
// On the host backends (PF_BACKEND_SERIAL, PF_BACKEND_OPENMP) the kernels run as the loops a
// Fortran compiler sees, so g++ can do what gfortran does (measured: bench/results/cpu_*_perf.md):
//   * a reduction accumulates into a local of each chunk of iterations, not into the
//     reference Kokkos hands the functor: that reference lives in memory the compiler must
//     assume the arrays may alias, so every iteration loaded and stored it (5-10x slower
//     than gfortran on dot products and norms);
//   * an MDRange is nested plain loops, the fastest index innermost (a contiguous, vectorisable
//     loop), parallel over the outer indices; Kokkos' host MDRange walks tiles through index
//     arithmetic the compiler does not vectorise (jacobi3d 2.4x slower than gfortran);
//   * a single-iteration kernel (serial statements between kernels) runs on the calling
//     thread, its scalars read and written in place (no View allocated per call, no fork).
// Device backends get the Kokkos policies unchanged. A chunk's iterations run in order, so
// Kokkos Serial sums in the Fortran loop's order.
#if defined(PF_BACKEND_SERIAL) || defined(PF_BACKEND_OPENMP)
#define PF_HOST_LOOPS 1
#endif

// Register-blocked kernels (translate/regblock.py) are compiled by GCC without its loop
// vectoriser: g++ 12 -O3 -march=native (AVX-512) vectorised dgemm's jammed inner loop across
// two of its iterations and read a whole vector of the column after the last (a segfault where
// that column crossed into an unmapped page: dgemm 'N','T', m = k = 1027 on Kokkos OpenMP).
// The block's copies are what the blocking vectorises anyway (across registers, SLP).
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__INTEL_COMPILER)
#define PF_NO_LOOP_VECTORIZE_BEGIN _Pragma("GCC push_options") _Pragma("GCC optimize(\"no-tree-loop-vectorize\")")
#define PF_NO_LOOP_VECTORIZE_END _Pragma("GCC pop_options")
#else
#define PF_NO_LOOP_VECTORIZE_BEGIN
#define PF_NO_LOOP_VECTORIZE_END
#endif

// Chunks a host reduction over n iterations is cut into: one on a single thread (the loop's
// own order), else a few per thread so a static schedule balances uneven iterations.
inline long host_parts(long n) {
  const long t = static_cast<long>(ExecSpace().concurrency());
  const long parts = t <= 1 ? 1 : 4 * t;
  return n <= 0 ? 0 : (n < parts ? n : parts);
}

#ifdef PF_HOST_LOOPS
// The innermost host loop: over an int index when the range fits (the kernels' Fortran
// default-integer indices are int: a long loop index narrowed to int at every call is not
// an affine subscript for the vectoriser), else over a long one.
template <class Body>
KOKKOS_FORCEINLINE_FUNCTION void host_loop(long b, long e, const Body& body) {
  if (b >= -2147483647L && e <= 2147483647L) {
    const int ie = static_cast<int>(e);
    for (int i = static_cast<int>(b); i < ie; ++i) body(i);
  } else {
    for (long i = b; i < e; ++i) body(i);
  }
}

// A MAX or MIN reduction (Kokkos::Max / Kokkos::Min of an arithmetic type): each SIMD lane
// keeps its own extremum (OpenMP simd reduction), as gfortran's MAX_EXPR reduction does
// (vmaxpd); the conditional pf::max is otherwise a loop-carried dependence the vectoriser
// does not reassociate (damax ran one element per vmaxsd latency). Order does not change a
// maximum. SUM and PROD keep the loop's order (the Fortran serial order). Needs -fopenmp or
// -fopenmp-simd (the ports' CMakeLists add it on host backends); without, a plain loop.
template <class R>
struct simd_extremum {
  static constexpr int value = 0;
};
template <class T, class S>
struct simd_extremum<Kokkos::Max<T, S>> {
  static constexpr int value = std::is_arithmetic<T>::value ? 1 : 0;
};
template <class T, class S>
struct simd_extremum<Kokkos::Min<T, S>> {
  static constexpr int value = std::is_arithmetic<T>::value ? 2 : 0;
};

// Returns acc reduced over b <= i < e by f(i, acc), op picked by the reducer. Not inlined on
// purpose: inlined into the kernel, g++ 12 kept a SUM's accumulator in a general register
// (or on the stack) and moved it to and from the FP unit at every iteration, 3-4x the
// original's time on one core (dnrm2 31 ms against 8 ms; bench/results/cpu_2026-12-04*.md).
// In a function of its own the accumulator is a register local to the loop; one call per
// reduction (per row of a nest) costs nothing next to the loop.
#if defined(__GNUC__) || defined(__clang__)
#define PF_NOINLINE __attribute__((noinline))
#else
#define PF_NOINLINE
#endif
template <class Reducer, class V, class F>
PF_NOINLINE V host_reduce_loop(long b, long e, V a, const F& fr) {
  constexpr int op = simd_extremum<Reducer>::value;
  const bool narrow = b >= -2147483647L && e <= 2147483647L;
  if (op == 0 || !narrow) {
    host_loop(b, e, [&](auto i) { fr(i, a); });
    return a;
  }
  // the SIMD lanes' copies of a MAX/MIN are stores g++ does not tell from the functor: a copy
  // of it here keeps its View pointers in registers (see host_copy; damax 5.3 ms without it,
  // 3.5 with, gfortran 3.5). A SUM is not given the copy: it cost dmvar 1.7x.
  const F f(fr);
  const int ib = static_cast<int>(b), ie = static_cast<int>(e);
  if constexpr (op == 1) {
#pragma omp simd reduction(max : a)
    for (int i = ib; i < ie; ++i) f(i, a);
  } else if constexpr (op == 2) {
#pragma omp simd reduction(min : a)
    for (int i = ib; i < ie; ++i) f(i, a);
  }
  return a;
}
#endif

// host_copy: inside a Kokkos dispatch the functor lives in Kokkos' memory, and the lambda's
// View data pointers are loaded through it at every iteration where the loop stores anything
// the compiler cannot separate from it (the OpenMP simd lane copies of a MAX reduction:
// damax gathered x through vgatherqpd, 5.7x the original on one OpenMP thread). A copy of
// the functor on the chunk's stack lets the compiler keep them in registers; one copy per
// chunk, not per iteration.

// Kokkos Serial runs a kernel on the calling thread anyway: run the loop here, without the
// launch (functor copies with their View reference counts, profiling hooks), unless a Kokkos
// tool is loaded (then the kernels go through Kokkos, so the tool sees them). Measured: dgemv
// 'N' launches two kernels per column and spent as long in launches as in its loops.
inline bool host_inline() {
#if defined(PF_BACKEND_SERIAL)
  return !Kokkos::Tools::profileLibraryLoaded();
#elif defined(PF_BACKEND_OPENMP)
  // one OpenMP thread: a parallel region is pure cost (libgomp allocates a one-thread team at
  // every region: 0.7 ms a launch measured in miniWeather's hybrid port, 36x its run time)
  return ExecSpace().concurrency() == 1 && !Kokkos::Tools::profileLibraryLoaded();
#else
  return false;
#endif
}

// A kernel's label and the work of one of its iterations as the translator estimates it
// (translate/work.py: the array elements its body reads and writes; 0 when unknown -- loops,
// calls or array syntax in the body). A plain label converts to one of unknown work.
struct Label {
  const char* name;
  long work;
  Label(const char* n, long w = 0) : name(n), work(w) {}  // NOLINT: implicit on purpose
};

// A kernel whose whole work (iterations x work of one) is below PF_INLINE_WORK element
// references runs on the calling thread on Kokkos OpenMP, as on one thread: opening a
// parallel region costs microseconds (libgomp wakes and joins the team), more than such a
// kernel's own time. TeaLeaf's bottom halo unpack (2882 iterations of two references, 5 us
// in gfortran, whose orphaned !$OMP DO runs serially) took 94 us as a Kokkos OpenMP kernel on
// 2 threads. The bound is for 2 threads and grows with the team (PF_INLINE_WORK x threads/2):
// a region of 16 threads costs 5.5 us where one of 2 costs 1.4, and sharing won from 10-16 K
// references on 2 threads, 33-82 K on 8 and 65-82 K on 16 (bench/inline_threshold.py,
// bench/results/inline_threshold_2026-12-07.md). Define PF_INLINE_WORK=0 to share every
// kernel. Not when a Kokkos tool is loaded (its profile lists every kernel).
#ifndef PF_INLINE_WORK
#define PF_INLINE_WORK 8192
#endif
inline long host_inline_work() {
  static const long bound = [] {
    const long threads = Kokkos::DefaultHostExecutionSpace().concurrency();
    return static_cast<long>(PF_INLINE_WORK) * (threads > 2 ? threads / 2 : 1);
  }();
  return bound;
}
inline bool host_small(const Label& l, long iterations) {
#if defined(PF_BACKEND_OPENMP)
  return l.work > 0 && iterations <= host_inline_work() / l.work && !Kokkos::Tools::profileLibraryLoaded();
#else
  (void)l;
  (void)iterations;
  return false;
#endif
}

// parallel_for_simd: a 1-D parallel_for whose iterations the host runs as SIMD lanes
// (OpenMP simd on the range), for a kernel the translator found fit (translate/outer_simd.py:
// an inner loop carrying a floating-point sum in a private scalar, each lane on its own
// contiguous element, the inner loop bottom-tested in this version). g++ otherwise
// vectorises the inner loop and adds the lanes of each sum one by one (nbody: 2x gfortran's
// time, which vectorises the outer loop). The iterations are independent (the loop is
// parallel) and each lane computes its element exactly as before. On a device: parallel_for.
#ifdef PF_HOST_LOOPS
template <class Body>
KOKKOS_FORCEINLINE_FUNCTION void host_loop_simd(long b, long e, const Body& body) {
  if (b >= -2147483647L && e <= 2147483647L) {
    const int ib = static_cast<int>(b), ie = static_cast<int>(e);
#pragma omp simd
    for (int i = ib; i < ie; ++i) body(i);
  } else {
    for (long i = b; i < e; ++i) body(i);
  }
}

// The host's loop of a 1-D parallel_for (Simd: of a parallel_for_simd): on one thread in
// place, else one chunk of the range per host part.
template <bool Simd, class F>
inline void host_range_for(const Label& label, const Range& p, const F& f) {
  const long lo = static_cast<long>(p.begin()), n = static_cast<long>(p.end()) - lo;
  if (host_inline() || n <= 1 || host_small(label, n)) {  // one iteration or little work: no parallel region
    if constexpr (Simd) {
      const F fl(f);  // a local copy: its fields (unmanaged views, scalars) in registers
      host_loop_simd(lo, lo + n, fl);
    } else {
      host_loop(lo, lo + n, f);
    }
    return;
  }
  // Kokkos' host loop hands the functor a 64-bit index that the lambda's int narrows: the
  // subscripts are then not affine and the loop does not vectorise (dgemv's column update)
  const long parts = host_parts(n);
  Kokkos::parallel_for(label.name, Kokkos::RangePolicy<ExecSpace>(0, parts), [=](const long c) {
    const F fl(f);  // see host_copy
    if constexpr (Simd) {
      host_loop_simd(lo + n * c / parts, lo + n * (c + 1) / parts, fl);
    } else {
      host_loop(lo + n * c / parts, lo + n * (c + 1) / parts, fl);
    }
  });
}
#endif

template <class F>
inline void parallel_for(const Label& label, const Range& p, const F& f) {
#ifdef PF_HOST_LOOPS
  host_range_for<false>(label, p, f);
#else
  Kokkos::parallel_for(label.name, p, f);
#endif
}

template <class F>
inline void parallel_for_simd(const Label& label, const Range& p, const F& f) {
#ifdef PF_HOST_LOOPS
  host_range_for<true>(label, p, f);
#else
  Kokkos::parallel_for(label.name, p, f);
#endif
}

#ifdef PF_HOST_LOOPS
// A nest the translator interchanged (fortran/interchange.py: the loop that was outside now
// inside each iteration, so a GPU runs one kernel with adjacent threads on adjacent
// elements) runs on the host in chunks of its outer range: f(b, e) runs the inclusive part
// [b, e] with the moved loop outside the chunk's own loop again, as the original ordered
// it (contiguous and vectorisable inside; dgemv 'N' read a row at a time otherwise).
template <class F>
inline void host_chunks(const char* label, long lo, long hi, const F& f) {
  const long n = hi >= lo ? hi - lo + 1 : 0;
  if (n == 0) return;
  if (host_inline()) {
    f(lo, hi);
    return;
  }
  const long parts = host_parts(n);
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace>(0, parts), [=](const long c) {
    const F fl(f);  // see host_copy
    const long b = lo + n * c / parts, e = lo + n * (c + 1) / parts - 1;
    if (b <= e) fl(b, e);
  });
}
#endif

template <class F, class Reducer>
inline void parallel_reduce(const Label& label, const Range& p, const F& f,
                            const Reducer& reducer) {
#ifdef PF_HOST_LOOPS
  using V = typename Reducer::value_type;
  const long lo = static_cast<long>(p.begin()), n = static_cast<long>(p.end()) - lo;
  if (host_inline() || n <= 1 || host_small(label, n)) {  // one iteration or little work: no parallel region
    V acc;
    reducer.init(acc);
    acc = host_reduce_loop<Reducer>(lo, lo + n, acc, f);
    reducer.reference() = acc;
    return;
  }
  const long parts = host_parts(n);
  Kokkos::parallel_reduce(
      label.name, Kokkos::RangePolicy<ExecSpace>(0, parts),
      [=](const long c, V& out) {
        V acc;
        reducer.init(acc);
        const long b = lo + n * c / parts, e = lo + n * (c + 1) / parts;
        const F fl(f);  // see host_copy
        acc = host_reduce_loop<Reducer>(b, e, acc, fl);
        reducer.join(out, acc);
      },
      reducer);
#else
  Kokkos::parallel_reduce(label.name, p, f, reducer);
#endif
}

// A prefix sum (translate/scan.py): f(i, partial, final), the total in ``total``. On one host
// thread (Kokkos Serial, or OpenMP on one thread) the loop runs once, in order, with final
// true: the sums in the Fortran loop's order and no second pass. Elsewhere Kokkos' scan.
template <class F, class T>
inline void parallel_scan(const char* label, const Range& p, const F& f, T& total) {
#ifdef PF_HOST_LOOPS
  if (host_inline()) {
    T acc = T();
    host_loop(static_cast<long>(p.begin()), static_cast<long>(p.end()), [&](auto i) { f(i, acc, true); });
    total = acc;
    return;
  }
#endif
  Kokkos::parallel_scan(label, p, f, total);
}

#ifdef PF_HOST_LOOPS
// Host MDRange loops: the outer indices (all but dimension 0) flattened into one parallel
// range, dimension 0 the innermost plain loop.
template <int R>
struct HostNest {
  long lo[R], n[R];
  long outer = 1;  // iterations of dimensions 1..R-1
  explicit HostNest(const Nest<R>& m) {
    for (int d = 0; d < R; ++d) {
      lo[d] = m.lo[d];
      n[d] = m.hi[d] >= m.lo[d] ? m.hi[d] - m.lo[d] + 1 : 0;
      if (d > 0) outer *= n[d];
    }
    if (n[0] == 0) outer = 0;
  }
  // the indices of dimensions 1..R-1 of outer iteration c (dimension 1 fastest)
  void indices(long c, long (&idx)[R]) const {
    for (int d = 1; d < R; ++d) {
      if (n[d] == 0) {  // an empty nest: no iteration reads them
        idx[d] = lo[d];
        continue;
      }
      idx[d] = lo[d] + c % n[d];
      c /= n[d];
    }
  }
  // the indices of the next outer iteration (an odometer: no division per row, which a nest of
  // short rows -- a halo of depth 1 -- paid per element)
  void next(long (&idx)[R]) const {
    for (int d = 1; d < R; ++d) {
      if (++idx[d] < lo[d] + n[d]) return;
      idx[d] = lo[d];
    }
  }
};

template <class F, class I, class Idx, std::size_t... D>
KOKKOS_FORCEINLINE_FUNCTION void host_call(const F& f, I i, const Idx& idx, std::index_sequence<D...>) {
  f(i, idx[D + 1]...);
}
template <class F, class I, class V, class Idx, std::size_t... D>
KOKKOS_FORCEINLINE_FUNCTION void host_call_red(const F& f, I i, const Idx& idx, V& acc, std::index_sequence<D...>) {
  f(i, idx[D + 1]..., acc);
}
#endif

template <int R, class F>
inline void parallel_for(const Label& label, const Nest<R>& m, const F& f) {
#ifdef PF_HOST_LOOPS
  const HostNest<R> h(m);
  const long lo0 = h.lo[0], hi0 = h.lo[0] + h.n[0];
  if (host_inline() || host_small(label, h.outer * h.n[0])) {
    long idx[R];
    h.indices(0, idx);
    for (long c = 0; c < h.outer; ++c, h.next(idx)) {
      host_loop(lo0, hi0, [&](auto i) { host_call(f, i, idx, std::make_index_sequence<R - 1>()); });
    }
    return;
  }
  if (h.outer == 1) {  // one row (a halo of depth 1 along the slow index): the threads share it
    long idx[R];
    h.indices(0, idx);
    host_range_for<false>(label, Range(lo0, hi0), [=](auto i) { host_call(f, i, idx, std::make_index_sequence<R - 1>()); });
    return;
  }
  // a few parts per thread, each a run of rows: one functor copy per part, not per row (a
  // nest whose rows are a few elements -- TeaLeaf's halo unpack, depth 1 or 2 -- copied the
  // functor and dispatched once per element)
  const long n = h.outer, parts = host_parts(n);
  Kokkos::parallel_for(label.name, Kokkos::RangePolicy<ExecSpace>(0, parts), [=](const long p) {
    const F fl(f);  // see host_copy
    long idx[R];
    const long b = n * p / parts, e = n * (p + 1) / parts;
    h.indices(b, idx);
    for (long c = b; c < e; ++c, h.next(idx)) {
      host_loop(lo0, hi0, [&](auto i) { host_call(fl, i, idx, std::make_index_sequence<R - 1>()); });
    }
  });
#else
  Kokkos::parallel_for(label.name, m.policy(), f);
#endif
}

template <int R, class F, class Reducer>
inline void parallel_reduce(const Label& label, const Nest<R>& m, const F& f, const Reducer& reducer) {
#ifdef PF_HOST_LOOPS
  using V = typename Reducer::value_type;
  const HostNest<R> h(m);
  const long lo0 = h.lo[0], hi0 = h.lo[0] + h.n[0], n = h.outer;
  if (host_inline() || host_small(label, n * h.n[0])) {
    V acc;
    reducer.init(acc);
    long idx[R];
    h.indices(0, idx);
    for (long c = 0; c < n; ++c, h.next(idx)) {
      acc = host_reduce_loop<Reducer>(lo0, hi0, acc, [&](auto i, V& a) { host_call_red(f, i, idx, a, std::make_index_sequence<R - 1>()); });
    }
    reducer.reference() = acc;
    return;
  }
  if (n == 1) {  // one row: the threads share it
    long idx[R];
    h.indices(0, idx);
    parallel_reduce(label, Range(lo0, hi0), [=](auto i, V& a) { host_call_red(f, i, idx, a, std::make_index_sequence<R - 1>()); }, reducer);
    return;
  }
  const long parts = host_parts(n);
  Kokkos::parallel_reduce(
      label.name, Kokkos::RangePolicy<ExecSpace>(0, parts),
      [=](const long p, V& out) {
        V acc;
        reducer.init(acc);
        const F fl(f);  // see host_copy
        long idx[R];
        const long b = n * p / parts, e = n * (p + 1) / parts;
        h.indices(b, idx);
        for (long c = b; c < e; ++c, h.next(idx)) {
          acc = host_reduce_loop<Reducer>(lo0, hi0, acc, [&](auto i, V& a) { host_call_red(fl, i, idx, a, std::make_index_sequence<R - 1>()); });
        }
        reducer.join(out, acc);
      },
      reducer);
#else
  Kokkos::parallel_reduce(label.name, m.policy(), f, reducer);
#endif
}

// The scattered updates of an 'atomic' kernel (x(k) = x(k) + v with k not a loop index).
// Kokkos Serial runs the whole kernel on one thread: a plain update (an atomic read-modify-
// write cost histi 3x the original's time there); every other backend: Kokkos::atomic_add.
template <class T, class U>
KOKKOS_INLINE_FUNCTION void atomic_add(T* p, const U& v) {
#if defined(PF_BACKEND_SERIAL)
  *p += v;
#else
  Kokkos::atomic_add(p, static_cast<T>(v));
#endif
}

// nv reads a value as a plain one: Kokkos 3's complex adds and multiplies no volatile
// values, it only copies from them (a join of several complex sums).
template <class T>
KOKKOS_INLINE_FUNCTION T nv(const volatile T& x) {
  return T(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION const T& nv(const T& x) {
  return x;
}

// The scattered updates of one array in an 'atomic' kernel on Kokkos OpenMP with several
// threads: when the array is small next to the kernel's iterations (a charge grid, a
// histogram), every thread adds into a private copy and the copies are summed into the array
// after the kernel, instead of contending for the same few elements with atomics (the PIC
// scatter at 16 threads: 3.7x the original's serial time, bench/results/cpu_2026-12-04_h200host16.md).
// A copy per thread pays when it stays in cache and the kernel updates many more elements
// than the array has (at most 4 MB a copy, span * threads <= 4 * iterations: measured on the
// 2-core machine, 2026-12-05, a histogram of 5.6 M items took 9 ms with copies against 29-33
// with atomics over 100 K bins, 11 against 18 over 1 M, 24 against 20 over 2 M, and twice the
// atomics' time over 5.6 M bins), else the updates stay atomic; `always` (the optimizer's
// 'scatter-copies' variant, for data that hits few elements of a large array) drops both
// conditions. Never more than 256 MB of copies. The store outlives the call (no allocation
// per call once grown). Elsewhere (Kokkos Serial, the device backends) add() is pf::atomic_add.
template <class T>
struct ScatterStore {
  std::vector<T> buf;
};

template <class T>
struct Scatter {
  T* base = nullptr;
  T* copies = nullptr;  // nullptr: the updates are atomic
  long span = 0;
#if defined(PF_BACKEND_OPENMP)
  Scatter(ScatterStore<T>& store, T* data, long n, long iterations, bool always = false) : base(data), span(n) {
    const long t = static_cast<long>(ExecSpace().concurrency());
    if (t <= 1 || host_inline() || n <= 0 || static_cast<double>(n) * t * sizeof(T) > 268435456.0)
      return;
    if (!always && (n * t > 4 * iterations || static_cast<double>(n) * sizeof(T) > 4194304.0))
      return;
    if (static_cast<long>(store.buf.size()) < n * t) store.buf.resize(n * t);
    copies = store.buf.data();
    T* c = copies;
    Kokkos::parallel_for("pf::Scatter:zero", Kokkos::RangePolicy<ExecSpace>(0, t), [=](const long k) {
      std::fill(c + k * n, c + (k + 1) * n, T(0));
    });
  }
  template <class U>
  void add(T* p, const U& v) const {
    if (copies == nullptr) {
      Kokkos::atomic_add(p, static_cast<T>(v));
    } else {
      copies[static_cast<long>(omp_get_thread_num()) * span + (p - base)] += static_cast<T>(v);
    }
  }
  void contribute() const {
    if (copies == nullptr) return;
    const long t = static_cast<long>(ExecSpace().concurrency()), n = span;
    T* c = copies;
    T* b = base;
    Kokkos::parallel_for("pf::Scatter:sum", Kokkos::RangePolicy<ExecSpace>(0, n), [=](const long e) {
      T s = b[e];
      for (long k = 0; k < t; ++k) s += c[k * n + e];
      b[e] = s;
    });
  }
#else
  Scatter(ScatterStore<T>&, T* data, long n, long, bool = false) : base(data), span(n) {}
  template <class U>
  KOKKOS_INLINE_FUNCTION void add(T* p, const U& v) const {
    atomic_add(p, v);
  }
  void contribute() const {}
#endif
};

// A single-iteration kernel: serial statements kept in the memory space. On the host
// backends it runs on the calling thread after the kernels before it finished.
// (Through Kokkos when a Kokkos tool is loaded, so profiles list it as before.)
template <class F>
inline void single_for(const char* label, const F& f) {
#ifdef PF_HOST_LOOPS
  if (Kokkos::Tools::profileLibraryLoaded()) {  // a Kokkos tool sees it as a kernel
    Kokkos::parallel_for(label, single(), f);
    return;
  }
  ExecSpace().fence();
  f(0);
#else
  Kokkos::parallel_for(label, single(), f);
#endif
}

// A scalar the statements of a single-iteration kernel read or write: on the host backends
// the host variable itself (through its address), elsewhere a View in MemSpace copied to and
// from the host variable around the kernel.
template <class T>
struct DevScalar {
#ifdef PF_HOST_LOOPS
  T* p;
  DevScalar(const char*, T& host) : p(&host) {}
  KOKKOS_INLINE_FUNCTION T& operator()() const { return *p; }
  void to_device() const {}
  void to_host() const {}
#else
  Kokkos::View<T, MemSpace> v;
  T* host;
  DevScalar(const char* label, T& h) : v(std::string(label)), host(&h) {}
  KOKKOS_INLINE_FUNCTION T& operator()() const { return v(); }
  void to_device() const { Kokkos::deep_copy(v, *host); }
  void to_host() const { Kokkos::deep_copy(*host, v); }
#endif
};

// Exclusive end of the inclusive Fortran range lo..hi, never below lo (nested team ranges).
KOKKOS_INLINE_FUNCTION int upto(int lo, int hi) { return hi >= lo ? hi + 1 : lo; }

// Extent of a dimension lo:hi (0 when hi < lo).
inline size_t extent(long lo, long hi) { return hi >= lo ? static_cast<size_t>(hi - lo + 1) : 0; }

// ---------------------------------------------------------------- math
#if KOKKOS_VERSION >= 30700
#define PF_MATH_NS Kokkos
#else
#define PF_MATH_NS Kokkos::Experimental
#endif

#define PF_UNARY(NAME)                                                        \
  template <class T>                                                         \
  KOKKOS_INLINE_FUNCTION auto NAME(const T& x)->decltype(PF_MATH_NS::NAME(x)) { \
    return PF_MATH_NS::NAME(x);                                              \
  }
PF_UNARY(sqrt)
PF_UNARY(exp)
PF_UNARY(log)
PF_UNARY(log10)
PF_UNARY(sin)
PF_UNARY(cos)
PF_UNARY(tan)
PF_UNARY(asin)
PF_UNARY(acos)
PF_UNARY(atan)
PF_UNARY(sinh)
PF_UNARY(cosh)
PF_UNARY(tanh)
PF_UNARY(floor)
PF_UNARY(ceil)
PF_UNARY(trunc)
PF_UNARY(fabs)
#undef PF_UNARY

KOKKOS_INLINE_FUNCTION double atan2(double y, double x) { return PF_MATH_NS::atan2(y, x); }
KOKKOS_INLINE_FUNCTION float atan2(float y, float x) { return PF_MATH_NS::atan2(y, x); }
KOKKOS_INLINE_FUNCTION double pow(double x, double y) { return PF_MATH_NS::pow(x, y); }
KOKKOS_INLINE_FUNCTION float pow(float x, float y) { return PF_MATH_NS::pow(x, y); }
KOKKOS_INLINE_FUNCTION double fmod(double x, double y) { return PF_MATH_NS::fmod(x, y); }
KOKKOS_INLINE_FUNCTION float fmod(float x, float y) { return PF_MATH_NS::fmod(x, y); }

// complex: Kokkos_Complex.hpp has the same spelling in every version
template <class T>
KOKKOS_INLINE_FUNCTION Kokkos::complex<T> sqrt(const Kokkos::complex<T>& z) { return Kokkos::sqrt(z); }
template <class T>
KOKKOS_INLINE_FUNCTION Kokkos::complex<T> exp(const Kokkos::complex<T>& z) { return Kokkos::exp(z); }
template <class T>
KOKKOS_INLINE_FUNCTION Kokkos::complex<T> conj(const Kokkos::complex<T>& z) { return Kokkos::conj(z); }
template <class T>
KOKKOS_INLINE_FUNCTION T cabs(const Kokkos::complex<T>& z) { return Kokkos::abs(z); }

// ABS for integers and reals (complex: cabs)
KOKKOS_INLINE_FUNCTION int abs(int x) { return x < 0 ? -x : x; }
KOKKOS_INLINE_FUNCTION long long abs(long long x) { return x < 0 ? -x : x; }
KOKKOS_INLINE_FUNCTION double abs(double x) { return PF_MATH_NS::fabs(x); }
KOKKOS_INLINE_FUNCTION float abs(float x) { return PF_MATH_NS::fabs(x); }

// MIN / MAX with Fortran's argument types (all arguments converted to the result type)
template <class T>
KOKKOS_INLINE_FUNCTION T min(T a, T b) { return b < a ? b : a; }
template <class T>
KOKKOS_INLINE_FUNCTION T max(T a, T b) { return b > a ? b : a; }

// an integer division in an array's extent (the largest subscript a DO loop with step b
// reaches): a loop with step 0 never runs (Fortran forbids it), so the routine cannot
// reach that subscript through it, and the entry must not divide by zero before the
// routine's own guard (dscal with incx = 0 returns at once)
template <class T>
KOKKOS_INLINE_FUNCTION T extent_div(T a, T b) { return b == T(0) ? T(0) : a / b; }

// integer power (Fortran i**n, x**n with an integer exponent): binary powering
template <class T, class I>
KOKKOS_INLINE_FUNCTION T ipow(T base, I n) {
  if (n < 0) {
    // integer base: 1**-n = 1, (-1)**-n = +-1, others 0; real base: 1/x**n
    T r = ipow(base, -n);
    return T(1) / r;
  }
  T result = T(1);
  while (n > 0) {
    if (n & 1) result *= base;
    n >>= 1;
    if (n > 0) base *= base;
  }
  return result;
}
KOKKOS_INLINE_FUNCTION int ipow(int base, int n) {
  if (n < 0) return base == 1 ? 1 : (base == -1 ? ((n & 1) ? -1 : 1) : 0);
  int result = 1;
  while (n > 0) {
    if (n & 1) result *= base;
    n >>= 1;
    if (n > 0) base *= base;
  }
  return result;
}

// SIGN(a, b): |a| with the sign of b (for reals a negative zero b counts as negative, as gfortran)
KOKKOS_INLINE_FUNCTION int sign(int a, int b) { return b >= 0 ? abs(a) : -abs(a); }
KOKKOS_INLINE_FUNCTION long long sign(long long a, long long b) { return b >= 0 ? abs(a) : -abs(a); }
template <class T>
KOKKOS_INLINE_FUNCTION T sign(T a, T b) {
  const bool negative = b < T(0) || (b == T(0) && T(1) / b < T(0));
  return negative ? -abs(a) : abs(a);
}

// MOD (C++ % and fmod truncate like Fortran) and MODULO (result has the sign of b)
template <class T>
KOKKOS_INLINE_FUNCTION T modulo(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
KOKKOS_INLINE_FUNCTION double modulo(double a, double b) {
  double r = PF_MATH_NS::fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
KOKKOS_INLINE_FUNCTION float modulo(float a, float b) {
  float r = PF_MATH_NS::fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// Bit intrinsics (IAND/IOR/IEOR/NOT are C++ operators). Shifts are logical, on the unsigned
// value, and a shift by the bit size or more gives 0, as Fortran defines them (C++ leaves
// those undefined): ISHFT/SHIFTL/SHIFTR, IBSET/IBCLR/BTEST/IBITS.
template <class T>
KOKKOS_INLINE_FUNCTION T ishft(T i, int shift) {
  using U = typename std::make_unsigned<T>::type;
  constexpr int bits = 8 * int(sizeof(T));
  if (shift >= bits || -shift >= bits) return T(0);
  return shift >= 0 ? static_cast<T>(static_cast<U>(i) << shift) : static_cast<T>(static_cast<U>(i) >> (-shift));
}
template <class T>
KOKKOS_INLINE_FUNCTION T ibset(T i, int pos) {
  using U = typename std::make_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(i) | (U(1) << pos));
}
template <class T>
KOKKOS_INLINE_FUNCTION T ibclr(T i, int pos) {
  using U = typename std::make_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(i) & ~(U(1) << pos));
}
template <class T>
KOKKOS_INLINE_FUNCTION bool btest(T i, int pos) {
  using U = typename std::make_unsigned<T>::type;
  return ((static_cast<U>(i) >> pos) & U(1)) != U(0);
}
template <class T>
KOKKOS_INLINE_FUNCTION T ibits(T i, int pos, int len) {
  using U = typename std::make_unsigned<T>::type;
  constexpr int bits = 8 * int(sizeof(T));
  const U mask = len >= bits ? ~U(0) : ((U(1) << len) - U(1));
  return static_cast<T>((static_cast<U>(i) >> pos) & mask);
}

// NINT: nearest integer, halves away from zero (exact: x - trunc(x) has no rounding)
template <class T>
KOKKOS_INLINE_FUNCTION int nint(T x) {
  T t = PF_MATH_NS::trunc(x);
  T f = x - t;
  if (f >= T(0.5)) t += T(1);
  if (f <= T(-0.5)) t -= T(1);
  return static_cast<int>(t);
}
// AINT / ANINT: truncation and the nearest whole number (halves away from zero), as reals
template <class T>
KOKKOS_INLINE_FUNCTION T aint(T x) { return PF_MATH_NS::trunc(x); }
template <class T>
KOKKOS_INLINE_FUNCTION T anint(T x) {
  T t = PF_MATH_NS::trunc(x);
  T f = x - t;
  if (f >= T(0.5)) t += T(1);
  if (f <= T(-0.5)) t -= T(1);
  return t;
}
// FLOOR / CEILING return integers in Fortran
template <class T>
KOKKOS_INLINE_FUNCTION int ifloor(T x) { return static_cast<int>(PF_MATH_NS::floor(x)); }
template <class T>
KOKKOS_INLINE_FUNCTION int iceiling(T x) { return static_cast<int>(PF_MATH_NS::ceil(x)); }

// LSAME (the BLAS/LAPACK helper): case-insensitive comparison of one character
KOKKOS_INLINE_FUNCTION bool lsame(char a, char b) {
  if (a >= 'a' && a <= 'z') a = static_cast<char>(a - 'a' + 'A');
  if (b >= 'a' && b <= 'z') b = static_cast<char>(b - 'a' + 'A');
  return a == b;
}

// ---------------------------------------------------------------- arrays of device functions
// An array dummy of a routine called from a kernel (a KOKKOS_INLINE_FUNCTION translated
// from the callee), or a small fixed-size local array of it: a pointer with the callee's
// declared shape, Fortran (column-major) order, 0-based indices (the caller of operator()
// subtracts the lower bounds). The last dimension needs no extent (assumed size). The
// caller passes &u(i0, i1, ...) of a View: every View of a port is LayoutLeft and
// unpadded (pf::View, pf::HostView and their create_mirror_view_and_copy copies are
// allocated without Kokkos::AllowPadding), so the element and all after it are contiguous
// in Fortran's array element order in every memory space, host or device, as Fortran's
// sequence association needs.
template <class T, int R>
struct FArray {
  T* ptr;
  long stride[R];
  template <class... E>
  KOKKOS_INLINE_FUNCTION explicit FArray(T* p, E... ext) : ptr(p) {
    static_assert(sizeof...(E) == R - 1, "pf::FArray<T, R> takes the extents of its first R - 1 dimensions");
    const long e[R] = {static_cast<long>(ext)..., 1L};
    long s = 1;
    for (int d = 0; d < R; ++d) {
      stride[d] = s;
      s *= e[d];
    }
  }
  template <class... Idx>
  KOKKOS_INLINE_FUNCTION T& operator()(Idx... i) const {
    static_assert(sizeof...(Idx) == R, "pf::FArray<T, R> takes R indices");
    const long idx[R] = {static_cast<long>(i)...};
    long off = 0;
    for (int d = 0; d < R; ++d) off += idx[d] * stride[d];
    return ptr[off];
  }
  KOKKOS_INLINE_FUNCTION T* data() const { return ptr; }
};

// Identities for the reductions of the generated reducers
template <class T>
KOKKOS_INLINE_FUNCTION T lowest() { return Kokkos::reduction_identity<T>::max(); }
template <class T>
KOKKOS_INLINE_FUNCTION T highest() { return Kokkos::reduction_identity<T>::min(); }

// A callee's error exit (fortran/error_exits.py): where the original prints a message and
// ends the program, its device function ends it too (the message names the routine and line).
KOKKOS_INLINE_FUNCTION void error_stop(const char* msg) { Kokkos::abort(msg); }

}  // namespace pf

// Kokkos 3.x also calls join() on volatile values; 4.x dropped that. Reducers written by
// port-fortran declare the volatile overload through this macro only where it is used.
#if KOKKOS_VERSION < 40000
#define PF_VOLATILE_JOIN(TYPE)                                                         \
  KOKKOS_INLINE_FUNCTION void join(volatile TYPE& dest, const volatile TYPE& src) const { \
    join_values(dest, src);                                                            \
  }
#else
#define PF_VOLATILE_JOIN(TYPE)
#endif

// CHARACTER strings (pf::Str, pf::Chars<N>, pf::Buf): their own header, the same in every port
#include "pf_strings.hpp"

#endif  // PF_KOKKOS_COMPAT_HPP
