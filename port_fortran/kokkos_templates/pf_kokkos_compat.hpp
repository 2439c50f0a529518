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
//   * pf::FArray, the array dummies of device functions (callees of a kernel);
//   * PF_VOLATILE_JOIN for reducers (Kokkos 3.x also calls a volatile join);
//   * to_device / from_device: the entries' array arguments in pf::MemSpace, resident between
//     calls where the program registered them (pf_runtime.hpp), else copied per call.
#ifndef PF_KOKKOS_COMPAT_HPP
#define PF_KOKKOS_COMPAT_HPP

#include <Kokkos_Core.hpp>
#include <Kokkos_Complex.hpp>

#include <cstdlib>

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

// ---------------------------------------------------------------- policies
// Fortran DO i = lo, hi (inclusive, empty when hi < lo).
inline Kokkos::RangePolicy<ExecSpace> range(long lo, long hi) {
  return Kokkos::RangePolicy<ExecSpace>(lo, hi >= lo ? hi + 1 : lo);
}

// The (0, 1) range of a single-iteration kernel (serial code kept in MemSpace).
inline Kokkos::RangePolicy<ExecSpace> single() { return Kokkos::RangePolicy<ExecSpace>(0, 1); }

// Number of iterations of DO i = lo, hi, step (Fortran: max(0, (hi - lo + step) / step)).
KOKKOS_INLINE_FUNCTION long trip(long lo, long hi, long step) {
  const long n = (hi - lo + step) / step;
  return n > 0 ? n : 0;
}

// MDRangePolicy over inclusive Fortran bounds (empty where hi < lo), optional tile sizes.
template <int R, Kokkos::Iterate It = Kokkos::Iterate::Left>
inline Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<R, It, It>> mdrange(const long (&lo)[R], const long (&hi)[R]) {
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<R, It, It>>;
  typename Policy::point_type lower, upper;
  for (int d = 0; d < R; ++d) {
    lower[d] = lo[d];
    upper[d] = hi[d] >= lo[d] ? hi[d] + 1 : lo[d];
  }
  return Policy(lower, upper);
}
template <int R, Kokkos::Iterate It = Kokkos::Iterate::Left>
inline Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<R, It, It>> mdrange(const long (&lo)[R], const long (&hi)[R],
                                                                         const long (&tile)[R]) {
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<R, It, It>>;
  typename Policy::point_type lower, upper;
  typename Policy::tile_type tiles;
  for (int d = 0; d < R; ++d) {
    lower[d] = lo[d];
    upper[d] = hi[d] >= lo[d] ? hi[d] + 1 : lo[d];
    tiles[d] = tile[d];
  }
  return Policy(lower, upper, tiles);
}

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

#endif  // PF_KOKKOS_COMPAT_HPP
