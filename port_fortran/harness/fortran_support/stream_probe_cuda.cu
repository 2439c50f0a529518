// Device memory bandwidth probe for port-fortran on NVIDIA GPUs: a STREAM triad
// a[i] = b[i] + s*c[i] over arrays far larger than L2, timed with CUDA events.
// Prints "PF_TRIAD_GBS <median GB/s>" counting 3 x 8 bytes per element (2 reads, 1 write).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define PF_CHECK(call)                                                                  \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      return 2;                                                                         \
    }                                                                                   \
  } while (0)

__global__ void pf_init(double* a, double* b, double* c, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    a[i] = -1.0; b[i] = 1.0 + 1e-9 * (i % 1000); c[i] = 2.0;
  }
}

__global__ void pf_triad(double* __restrict__ a, const double* __restrict__ b, const double* __restrict__ c,
                         double s, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    a[i] = b[i] + s * c[i];
}

int main() {
  const long n = std::getenv("PF_PROBE_N") ? std::atol(std::getenv("PF_PROBE_N")) : 128L * 1024 * 1024;
  double *a, *b, *c;
  PF_CHECK(cudaMalloc(&a, n * sizeof(double)));
  PF_CHECK(cudaMalloc(&b, n * sizeof(double)));
  PF_CHECK(cudaMalloc(&c, n * sizeof(double)));
  int sms = 0;
  PF_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  // one element per thread over the whole array (as a Kokkos RangePolicy launches): a
  // grid-stride loop over 8 blocks per SM read 4.06 TB/s on an H200 where a Kokkos triad
  // (one element per thread) read 4.34 TB/s
  const int threads = 256;
  const long blocks = std::min((n + threads - 1) / threads, 2147483647L);
  (void)sms;
  pf_init<<<blocks, threads>>>(a, b, c, n);
  PF_CHECK(cudaGetLastError());
  cudaEvent_t e0, e1;
  PF_CHECK(cudaEventCreate(&e0));
  PF_CHECK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int r = 0; r < 23; ++r) {
    PF_CHECK(cudaEventRecord(e0));
    pf_triad<<<blocks, threads>>>(a, b, c, 3.0, n);
    PF_CHECK(cudaEventRecord(e1));
    PF_CHECK(cudaEventSynchronize(e1));
    PF_CHECK(cudaGetLastError());
    float t = 0;
    PF_CHECK(cudaEventElapsedTime(&t, e0, e1));
    if (r >= 3) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  const double med = 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) * 1e-3;
  double probe[2];
  PF_CHECK(cudaMemcpy(probe, a + n - 2, 2 * sizeof(double), cudaMemcpyDeviceToHost));
  std::printf("PF_TRIAD_GBS %.3f\nn %ld median_ms %.4f check %g\n", 3.0 * 8.0 * n / med / 1e9, n, med * 1e3,
              probe[0] + probe[1]);
  cudaFree(a); cudaFree(b); cudaFree(c);
  return 0;
}
