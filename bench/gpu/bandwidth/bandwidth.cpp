// Memory-bandwidth ceiling of the card (or host) that Kokkos sees: device-to-device
// deep_copy (bytes read + written) and a STREAM triad a = b + s*c (3 arrays), each the
// median of repeated timed runs after warm-up, on arrays several times the size of L2.
// Usage: bandwidth [MiB per array, default 1024] [repeats, default 20]
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  int rc = 0;
  {
    const long mib = argc > 1 ? std::atol(argv[1]) : 1024;
    const int reps = argc > 2 ? std::atoi(argv[2]) : 20;
    const long n = mib * 1024L * 1024L / 8;
    using V = Kokkos::View<double*>;
    V a("a", n), b("b", n), c("c", n);
    const double s = 3.0;
    Kokkos::parallel_for("init", n, KOKKOS_LAMBDA(const long i) {
      b(i) = 1.0 + 1e-9 * double(i % 1000);
      c(i) = 2.0 - 1e-9 * double(i % 777);
      a(i) = -1.0;
    });
    Kokkos::fence();
    std::vector<double> tcopy, ttriad;
    for (int r = 0; r < reps + 3; ++r) {
      Kokkos::Timer t;
      Kokkos::deep_copy(a, b);
      Kokkos::fence();
      const double dt = t.seconds();
      if (r >= 3) tcopy.push_back(dt);
    }
    for (int r = 0; r < reps + 3; ++r) {
      Kokkos::Timer t;
      Kokkos::parallel_for("triad", n, KOKKOS_LAMBDA(const long i) { a(i) = b(i) + s * c(i); });
      Kokkos::fence();
      const double dt = t.seconds();
      if (r >= 3) ttriad.push_back(dt);
    }
    // check the triad result everywhere (never trust an exit code)
    long bad = 0;
    Kokkos::parallel_reduce("check", n, KOKKOS_LAMBDA(const long i, long& nb) {
      if (a(i) != b(i) + s * c(i)) ++nb;
    }, bad);
    const double mc = median(tcopy), mt = median(ttriad);
    const double gb_copy = 2.0 * n * 8 / mc / 1e9, gb_triad = 3.0 * n * 8 / mt / 1e9;
    std::printf("space=%s array_MiB=%ld reps=%d copy_ms=%.3f copy_GBps=%.1f triad_ms=%.3f triad_GBps=%.1f "
                "copy_min_max_ms=%.3f/%.3f triad_min_max_ms=%.3f/%.3f bad=%ld\n",
                Kokkos::DefaultExecutionSpace::name(), mib, reps, mc * 1e3, gb_copy, mt * 1e3, gb_triad,
                *std::min_element(tcopy.begin(), tcopy.end()) * 1e3, *std::max_element(tcopy.begin(), tcopy.end()) * 1e3,
                *std::min_element(ttriad.begin(), ttriad.end()) * 1e3, *std::max_element(ttriad.begin(), ttriad.end()) * 1e3,
                bad);
    rc = bad ? 1 : 0;
  }
  Kokkos::finalize();
  return rc;
}
