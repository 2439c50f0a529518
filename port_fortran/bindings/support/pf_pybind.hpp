// pf_pybind.hpp -- written by port-fortran; the same file in every Python module of ports.
//
// The checks between a Python call and a port's extern "C" entry: scalars must be Python (or
// numpy) numbers of the right kind, arrays numpy arrays of the Fortran type's dtype and rank,
// in Fortran (column-major) order, at least as large as the routine reads and writes, and
// writable when the routine writes them. Each failure is a TypeError or ValueError that
// names the routine, the argument (position, name, Fortran declaration) and what to pass.
// With copy=True an array in the wrong order (or not contiguous, or misaligned) is copied
// into a Fortran-ordered temporary, and copied back into the caller's array after the call
// when the routine writes it.
#ifndef PF_PYBIND_HPP
#define PF_PYBIND_HPP

#include <pybind11/complex.h>
#include <pybind11/gil_safe_call_once.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <complex>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace pf_py {
namespace py = pybind11;

// What messages say about one argument.
struct Arg {
  const char* routine;
  int position;  // 1-based, in the Fortran argument list
  const char* name;
  const char* ftype;  // 'real(8)'
  const char* intent;
  const char* declared;  // 'a(lda, *)'

  std::string where() const {
    return std::string(routine) + "(): argument " + std::to_string(position) + " '" + name + "' (" + ftype +
           " " + declared + ", intent(" + intent + "))";
  }
};

// Every call of every routine of the module holds this lock while it is in Kokkos (the GIL
// is released meanwhile): Kokkos' host backends are not meant to be entered from several
// threads at once.
inline std::mutex& call_mutex() {
  static std::mutex m;
  return m;
}

inline std::string type_name(py::handle o) { return py::str(py::type::handle_of(o).attr("__name__")); }

inline std::string short_repr(py::handle o) {
  std::string r = py::repr(o);
  return r.size() > 40 ? r.substr(0, 37) + "..." : r;
}

// The Python classes the checks use, looked up once per process.
enum class Cls { Integral, Real, Complex, NumpyBool };

inline py::handle cls(Cls which) {
  using Store = py::gil_safe_call_once_and_store<py::object>;
  static Store integral, real, complex_, npbool;
  switch (which) {
    case Cls::Integral:
      return integral.call_once_and_store_result([] { return py::module_::import("numbers").attr("Integral"); })
          .get_stored();
    case Cls::Real:
      return real.call_once_and_store_result([] { return py::module_::import("numbers").attr("Real"); })
          .get_stored();
    case Cls::Complex:
      return complex_.call_once_and_store_result([] { return py::module_::import("numbers").attr("Complex"); })
          .get_stored();
    default:
      return npbool.call_once_and_store_result([] { return py::module_::import("numpy").attr("bool_"); })
          .get_stored();
  }
}

inline bool isinstance_of(py::handle o, Cls which) { return py::isinstance(o, cls(which)); }

inline bool is_bool(py::handle o) { return PyBool_Check(o.ptr()) || isinstance_of(o, Cls::NumpyBool); }

[[noreturn]] inline void type_error(const Arg& a, const std::string& what) {
  throw py::type_error(a.where() + ": " + what);
}

[[noreturn]] inline void value_error(const Arg& a, const std::string& what) {
  throw py::value_error(a.where() + ": " + what);
}

// ---------------------------------------------------------------- scalars

template <class T>
T integer(py::handle o, const Arg& a) {
  if (!PyLong_CheckExact(o.ptr()) && (is_bool(o) || !isinstance_of(o, Cls::Integral)))
    type_error(a, "expected an integer (int or a numpy integer), got " + type_name(o) + " " + short_repr(o));
  py::int_ v = py::reinterpret_steal<py::int_>(PyNumber_Index(o.ptr()));
  if (!v) throw py::error_already_set();
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow || x < static_cast<long long>(std::numeric_limits<T>::min()) ||
      x > static_cast<long long>(std::numeric_limits<T>::max()))
    throw py::value_error(a.where() + ": " + short_repr(o) + " does not fit in " + a.ftype);
  return static_cast<T>(x);
}

template <class T>
T real(py::handle o, const Arg& a) {
  if (!PyFloat_CheckExact(o.ptr()) && !PyLong_CheckExact(o.ptr()) && (is_bool(o) || !isinstance_of(o, Cls::Real)))
    type_error(a, "expected a real number (float, int or a numpy float), got " + type_name(o) + " " + short_repr(o));
  double x = PyFloat_AsDouble(o.ptr());
  if (x == -1.0 && PyErr_Occurred()) throw py::error_already_set();
  return static_cast<T>(x);
}

template <class T>  // T = std::complex<float|double>
T complex(py::handle o, const Arg& a) {
  if (is_bool(o) || !isinstance_of(o, Cls::Complex))
    type_error(a, "expected a number (complex, float or int), got " + type_name(o) + " " + short_repr(o));
  Py_complex c = PyComplex_AsCComplex(o.ptr());
  if (c.real == -1.0 && PyErr_Occurred()) throw py::error_already_set();
  return T(static_cast<typename T::value_type>(c.real), static_cast<typename T::value_type>(c.imag));
}

template <class T>  // gfortran's LOGICAL: 1 for .true., 0 for .false.
T logical(py::handle o, const Arg& a) {
  if (!is_bool(o)) type_error(a, "expected True or False, got " + type_name(o) + " " + short_repr(o));
  return static_cast<T>(py::bool_(py::reinterpret_borrow<py::object>(o)) ? 1 : 0);
}

inline char character(py::handle o, const Arg& a) {
  if (PyUnicode_Check(o.ptr())) {
    std::string s = py::str(o);
    if (s.size() == 1) return s[0];
  } else if (PyBytes_Check(o.ptr())) {
    std::string s = py::bytes(py::reinterpret_borrow<py::object>(o));
    if (s.size() == 1) return s[0];
  } else {
    type_error(a, "expected a one-character str, got " + type_name(o) + " " + short_repr(o));
  }
  value_error(a, "expected one character (CHARACTER*1), got " + short_repr(o));
}

// Python values of what the routine returns.
template <class T>
py::object to_py(T v) {
  if constexpr (std::is_same_v<T, char>) {
    return py::str(std::string(1, v));
  } else if constexpr (std::is_integral_v<T>) {
    return py::int_(static_cast<long long>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    return py::float_(static_cast<double>(v));
  } else {
    return py::cast(v);  // std::complex -> complex
  }
}

template <class T>
py::object logical_to_py(T v) {
  return py::bool_(v != 0);
}

// Nothing: None; one value: the value; several: a tuple.
inline py::object pack(std::vector<py::object> values) {
  if (values.empty()) return py::none();
  if (values.size() == 1) return values[0];
  py::tuple t(values.size());
  for (size_t i = 0; i < values.size(); ++i) t[i] = values[i];
  return t;
}

// ---------------------------------------------------------------- arrays

inline py::dtype numpy_dtype(const char* spec) {  // '<f8', '<i4', ... as numpy.dtype reads them
  return py::reinterpret_borrow<py::dtype>(py::module_::import("numpy").attr("dtype")(spec));
}

// ``spec`` is a little-endian numpy dtype string, '<f8': kind 'f', 8 bytes. The array's
// dtype matches when it has that kind and size in this machine's byte order.
inline bool same_dtype(const py::dtype& have, const char* spec) {
  const char order = have.byteorder();
  const bool little = order == '<' || order == '|' || (order == '=' && PY_LITTLE_ENDIAN);
  return little && have.kind() == spec[1] && have.itemsize() == std::stoi(spec + 2);
}

inline std::string shape_text(const py::array& arr) {
  std::string s = "(";
  for (py::ssize_t d = 0; d < arr.ndim(); ++d) s += (d ? ", " : "") + std::to_string(arr.shape(d));
  return s + (arr.ndim() == 1 ? ",)" : ")");
}

struct ArrayArg {
  py::array arr;      // what the port reads and writes
  py::object caller;  // the caller's array when arr is a copy of it (written back after the call)

  void* ptr() const { return const_cast<void*>(arr.data()); }

  void write_back() {
    if (caller) caller.attr("__setitem__")(py::ellipsis(), arr);
  }
};

// ``need[d]``: the extent the entry wraps in dimension d (for these scalar arguments);
// ``bounds[d]``: the Fortran bounds it comes from ('1:lda', '1:max(n, m)').
inline ArrayArg array(py::handle o, const Arg& a, const char* dtype, const char* dtype_name, int rank,
                      const long long* need, const char* const* bounds, bool writable, bool copy,
                      const char* copy_kw) {
  if (!py::isinstance<py::array>(o))
    type_error(a, "expected a numpy array of dtype " + std::string(dtype_name) + ", got " + type_name(o) +
                      "; pass np.asarray(" + a.name + ", dtype=np." + dtype_name + ", order='F')");
  py::array arr = py::reinterpret_borrow<py::array>(o);
  if (!same_dtype(arr.dtype(), dtype)) {
    std::string got = py::str(arr.dtype());
    std::string hint = std::string(a.ftype).rfind("logical", 0) == 0
                           ? " (gfortran's LOGICAL: 0 for .false., 1 for .true.)"
                           : "";
    type_error(a, "dtype " + got + ", expected " + dtype_name + hint + "; pass " + a.name + ".astype(np." +
                      dtype_name + ") (a copy)");
  }
  if (arr.ndim() != rank)
    value_error(a, "expected a " + std::to_string(rank) + "-D array, got a " + std::to_string(arr.ndim()) +
                       "-D array of shape " + shape_text(arr));
  long long total = 1;
  for (int d = 0; d < rank; ++d) total *= need[d];
  if (total > 0) {  // nothing is read or written when an extent is 0
    for (int d = 0; d < rank; ++d) {
      long long got = arr.shape(d);
      bool last = d == rank - 1;
      if ((!last && got != need[d]) || (last && got < need[d])) {
        std::string what = last ? "at least " : "exactly ";
        value_error(a, "shape " + shape_text(arr) + ": dimension " + std::to_string(d + 1) + " must have " + what +
                           std::to_string(need[d]) + " elements (" + bounds[d] +
                           " for these arguments), it has " + std::to_string(got));
      }
    }
  }
  if (writable && !arr.writeable())
    value_error(a, "the array is read-only and the routine writes it; pass a writable copy (np.array(" +
                       std::string(a.name) + "))");
  const int flags = arr.flags();
  const bool contiguous = rank == 1 ? (flags & (py::array::c_style | py::array::f_style)) != 0
                                    : (flags & py::array::f_style) != 0;
  const bool aligned = (flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_) != 0;
  if (contiguous && aligned) return ArrayArg{arr, py::object()};
  if (!copy) {
    std::string why = !aligned ? "not aligned"
                      : rank == 1 ? "not contiguous (a strided view)"
                      : (flags & py::array::c_style) ? "in C (row-major) order"
                                                     : "not contiguous in Fortran (column-major) order";
    value_error(a, std::string("the array is ") + why + "; Fortran needs it contiguous in column-major order: pass "
                       "np.asfortranarray(" + a.name + "), or call with " + copy_kw +
                       "=True to let the binding copy it in" + (writable ? " and back out" : ""));
  }
  py::array tmp = py::module_::import("numpy").attr("array")(arr, py::arg("order") = "F", py::arg("copy") = true);
  return ArrayArg{tmp, writable ? py::reinterpret_borrow<py::object>(o) : py::object()};
}

// ---------------------------------------------------------------- COMMON blocks

// A numpy view (no copy) of a COMMON member in the module's block: Fortran order, the
// module object as its owner so the view cannot outlive the module.
inline py::array member_view(void* ptr, const char* dtype, std::vector<py::ssize_t> shape, py::handle owner) {
  py::dtype dt = numpy_dtype(dtype);
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t s = dt.itemsize();
  for (size_t d = 0; d < shape.size(); ++d) {
    strides[d] = s;
    s *= shape[d];
  }
  return py::array(dt, shape, strides, ptr, owner);
}

}  // namespace pf_py

#endif  // PF_PYBIND_HPP
