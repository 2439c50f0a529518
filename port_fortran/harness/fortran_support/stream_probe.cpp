// STREAM-triad-like memory bandwidth probe for port-fortran (a[i] = b[i] + s*c[i]).
// Prints "PF_TRIAD_GBS <best GB/s>" counting 3 x 8 bytes per element (2 reads, 1 write).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <omp.h>

int main() {
  const long n = std::getenv("PF_PROBE_N") ? std::atol(std::getenv("PF_PROBE_N")) : 8L * 1024 * 1024;
  double* a = static_cast<double*>(std::malloc(n * sizeof(double)));
  double* b = static_cast<double*>(std::malloc(n * sizeof(double)));
  double* c = static_cast<double*>(std::malloc(n * sizeof(double)));
  if (!a || !b || !c) return 2;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) { a[i] = 0.0; b[i] = 1.0; c[i] = 2.0; }
  double best = 1e30;
  for (int r = 0; r < 8; ++r) {
    auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0 && t < best) best = t;
  }
  double check = 0;
  for (long i = 0; i < n; i += 4096) check += a[i];
  std::printf("PF_TRIAD_GBS %.3f\nthreads %d n %ld check %g\n", 3.0 * 8.0 * n / best / 1e9,
              omp_get_max_threads(), n, check);
  std::free(a); std::free(b); std::free(c);
  return 0;
}
