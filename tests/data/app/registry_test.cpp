// Host-side test of the residency registry (pf_runtime.hpp) with a mock device memory that
// keeps its copies in separate host buffers and counts every copy: what the CUDA backend
// does, checked without a GPU. Each check prints "FAIL <line>: <what>"; exit 1 on failure.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "pf_runtime.hpp"

namespace {

int failures = 0;
#define CHECK(cond)                                                 \
  do {                                                              \
    if (!(cond)) {                                                  \
      std::printf("FAIL %d: %s\n", __LINE__, #cond);                 \
      ++failures;                                                   \
    }                                                               \
  } while (0)

struct MockMemory : pf::DeviceMemory {
  long allocs = 0, frees = 0, in = 0, out = 0;
  void* allocate(std::size_t bytes) override {
    ++allocs;
    void* p = std::malloc(bytes);
    std::memset(p, 0xA5, bytes);  // garbage: a missed copy shows
    return p;
  }
  void deallocate(void* p) override {
    ++frees;
    std::free(p);
  }
  void to_device(void* d, const void* h, std::size_t n) override {
    ++in;
    std::memcpy(d, h, n);
  }
  void to_host(void* h, const void* d, std::size_t n) override {
    ++out;
    std::memcpy(h, d, n);
  }
};

// a "kernel": y(i) = y(i) + a * x(i), run on the device copies as a port's entry would
void axpy(pf::Registry& r, double a, const double* x, double* y, int n) {
  const std::size_t bytes = n * sizeof(double);
  std::vector<double> xc, yc;  // per-call copies when not resident
  const double* dx = static_cast<const double*>(r.device_ptr(x, bytes));
  if (!dx) {
    r.before_copy(x, bytes);
    xc.assign(x, x + n);
    dx = xc.data();
  }
  double* dy = static_cast<double*>(r.device_ptr(y, bytes));
  bool copied = false;
  if (!dy) {
    r.before_copy(y, bytes);
    yc.assign(y, y + n);
    dy = yc.data();
    copied = true;
  }
  for (int i = 0; i < n; ++i) dy[i] += a * dx[i];
  if (!r.device_wrote(y, bytes)) {
    CHECK(copied);
    std::memcpy(y, dy, bytes);
    r.after_copy_write(y, bytes);
  }
}

}  // namespace

int main() {
  const int n = 100;
  // ---- resident arrays: one copy in, none out until the host reads
  {
    MockMemory mem;
    pf::Registry r;
    r.set_enabled(true);
    r.set_memory(&mem);
    std::vector<double> x(n, 1.0), y(n, 0.0);
    r.add(x.data(), n * sizeof(double));
    r.add(y.data(), n * sizeof(double));
    r.add(y.data() + 10, 5 * sizeof(double));  // inside a registered range: nothing new
    CHECK(r.size() == 2);
    for (int step = 0; step < 10; ++step) axpy(r, 2.0, x.data(), y.data(), n);
    CHECK(mem.in == 2);   // x and y copied in once
    CHECK(mem.out == 0);  // y stays on the device
    CHECK(y[0] == 0.0);   // the host copy is stale until synced
    r.host_read(y.data(), n * sizeof(double));
    CHECK(mem.out == 1);
    CHECK(y[0] == 20.0 && y[n - 1] == 20.0);
    r.host_read(y.data(), n * sizeof(double));  // already current: no copy
    CHECK(mem.out == 1);
    // the host changes x: the next port call copies it in again, y is not copied in
    r.host_write(x.data(), n * sizeof(double));
    for (int i = 0; i < n; ++i) x[i] = 3.0;
    axpy(r, 1.0, x.data(), y.data(), n);
    CHECK(mem.in == 3);
    r.host_read(y.data() + 50, -1);  // an assumed-size view from the middle: syncs the whole range
    CHECK(y[0] == 23.0 && y[99] == 23.0);
    CHECK(r.counters.resident_uses == 22);
    // host writes part of y, then a port: the whole range goes in again, the host values win
    r.host_write(y.data() + 3, sizeof(double));
    y[3] = -1.0;
    axpy(r, 0.0, x.data(), y.data(), n);
    r.host_read(y.data(), n * sizeof(double));
    CHECK(y[3] == -1.0 && y[4] == 23.0);
    // release: copied back first, then forgotten and freed
    axpy(r, 1.0, x.data(), y.data(), n);
    r.release(y.data(), n * sizeof(double));
    CHECK(y[4] == 26.0);
    CHECK(r.size() == 1);
    r.clear();
    CHECK(mem.allocs == mem.frees);
  }
  // ---- an unregistered array overlapping a registered one goes through a per-call copy,
  // after the registered range is made current on the host; the copy back marks it HostNewer
  {
    MockMemory mem;
    pf::Registry r;
    r.set_enabled(true);
    r.set_memory(&mem);
    std::vector<double> big(2 * n, 1.0), x(n, 1.0);
    r.add(big.data(), n * sizeof(double));  // the first half registered
    axpy(r, 1.0, x.data(), big.data(), n);    // resident: device copy 2.0, host still 1.0
    CHECK(big[0] == 1.0);
    axpy(r, 1.0, x.data(), big.data() + n / 2, n);  // straddles the registered range: per-call copy
    CHECK(big[0] == 2.0);                            // synced before the copy
    CHECK(big[n / 2] == 3.0 && big[n + n / 2 - 1] == 2.0);
    axpy(r, 1.0, x.data(), big.data(), n);  // registered again HostNewer: copied in with the host's values
    r.host_read(big.data(), n * sizeof(double));
    CHECK(big[n / 2] == 4.0 && big[0] == 3.0);
    CHECK(r.counters.per_call_copies == 1 + 3);  // big's straddling range once, x each time
    r.clear();
  }
  // ---- registering a range overlapping registered ones merges them (device-newer data kept)
  {
    MockMemory mem;
    pf::Registry r;
    r.set_enabled(true);
    r.set_memory(&mem);
    std::vector<double> a(3 * n, 0.0), x(n, 1.0);
    r.add(a.data(), n * sizeof(double));
    r.add(a.data() + 2 * n, n * sizeof(double));
    axpy(r, 5.0, x.data(), a.data(), n);  // device newer
    r.add(a.data(), 3 * n * sizeof(double));
    CHECK(r.size() == 1);
    CHECK(a[0] == 5.0);  // synced before the merge
    r.clear();
    CHECK(mem.allocs == mem.frees);
  }
  // ---- disabled (PF_RESIDENT=0): nothing is registered, every call copies
  {
    MockMemory mem;
    pf::Registry r;
    r.set_enabled(false);
    r.set_memory(&mem);
    std::vector<double> x(n, 1.0), y(n, 0.0);
    r.add(y.data(), n * sizeof(double));
    CHECK(r.size() == 0);
    axpy(r, 1.0, x.data(), y.data(), n);
    CHECK(y[0] == 1.0 && mem.in == 0 && mem.out == 0);
  }
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "passed", failures);
  return failures ? 1 : 0;
}
