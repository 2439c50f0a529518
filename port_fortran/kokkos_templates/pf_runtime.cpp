// pf_runtime.cpp -- written by port-fortran: the Fortran side of the residency registry
// (pf_runtime.hpp), compiled once into an application's ports library.
//
// The modern tree of an application calls these through module pf_runtime_mod
// (pf_runtime_mod.f90): the array is passed as an assumed-rank descriptor, so the calls
// take any type and rank and never copy the array. Where pf::MemSpace is host memory they
// do nothing.
//
//   pf_resident(x)    register x's storage (static storage, or an allocated array until released)
//   pf_host_read(x)   host code is about to read x: copy back what a port wrote
//   pf_host_write(x)  host code is about to write x: the same, then the host copy is newer
//   pf_release(x)     x is about to be freed or reallocated: copy back, forget the range
#include <ISO_Fortran_binding.h>

#include "pf_kokkos_compat.hpp"

namespace {

// [*begin, *begin + *bytes) covered by the array; bytes -1 for an assumed-size array (to
// the end of the registered range holding it). False for an absent or empty array.
bool range_of(const CFI_cdesc_t* d, const void** begin, long* bytes) {
  if (d == nullptr || d->base_addr == nullptr) return false;
  const char* base = static_cast<const char*>(d->base_addr);
  std::ptrdiff_t lo = 0, hi = 0;
  for (int r = 0; r < d->rank; ++r) {
    const CFI_index_t ext = d->dim[r].extent;
    if (ext < 0) {  // assumed size (the last dimension)
      *begin = base;
      *bytes = -1;
      return true;
    }
    if (ext == 0) return false;
    const std::ptrdiff_t step = static_cast<std::ptrdiff_t>(d->dim[r].sm) * (ext - 1);
    if (step < 0) lo += step; else hi += step;
  }
  *begin = base + lo;
  *bytes = static_cast<long>(hi - lo) + static_cast<long>(d->elem_len);
  return true;
}

}  // namespace

extern "C" {

void pf_resident(const CFI_cdesc_t* x) {
  if (!pf::separate_memory) return;
  const void* b;
  long n;
  if (range_of(x, &b, &n) && n > 0) pf::device_registry().add(b, static_cast<std::size_t>(n));
}

void pf_host_read(const CFI_cdesc_t* x) {
  if (!pf::separate_memory) return;
  const void* b;
  long n;
  if (range_of(x, &b, &n)) pf::device_registry().host_read(b, n);
}

void pf_host_write(const CFI_cdesc_t* x) {
  if (!pf::separate_memory) return;
  const void* b;
  long n;
  if (range_of(x, &b, &n)) pf::device_registry().host_write(b, n);
}

void pf_release(const CFI_cdesc_t* x) {
  if (!pf::separate_memory) return;
  const void* b;
  long n;
  if (range_of(x, &b, &n)) pf::device_registry().release(b, n);
}

}  // extern "C"
