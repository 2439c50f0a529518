// cuBLAS FP64 GEMM at n x n, the vendor reference of bench/gpu (median of repeats).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 4096, repeats = argc > 2 ? atoi(argv[2]) : 5;
  double *a, *b, *c;
  const size_t bytes = sizeof(double) * n * (size_t)n;
  cudaMalloc(&a, bytes); cudaMalloc(&b, bytes); cudaMalloc(&c, bytes);
  std::vector<double> h(n * (size_t)n);
  for (size_t i = 0; i < h.size(); ++i) h[i] = (double)((i * 2654435761u) % 1000) / 1000.0 - 0.5;
  cudaMemcpy(a, h.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(b, h.data(), bytes, cudaMemcpyHostToDevice);
  cublasHandle_t hd; cublasCreate(&hd);
  const double one = 1.0, zero = 0.0;
  cublasDgemm(hd, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
  cudaDeviceSynchronize();
  std::vector<float> ts;
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int r = 0; r < repeats; ++r) {
    cudaEventRecord(e0);
    cublasDgemm(hd, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  std::printf("cublas dgemm n=%d %9.1f GFLOP/s\n", n, 2.0 * n * (double)n * n / (ts[ts.size() / 2] * 1e-3) * 1e-9);
}
