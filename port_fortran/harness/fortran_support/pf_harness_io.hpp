// Reading and writing the harness records (see port_fortran/harness/inputs.py):
// int64 ndim, lbound[ndim], ubound[ndim], type code, nbytes, then the raw data.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace pf_harness {

struct Rec {
  int64_t nd = 0, code = 0, nbytes = 0;
  std::vector<int64_t> lb, ub;
  std::vector<double> store;  // 8-byte aligned storage
  void* p() { return store.empty() ? static_cast<void*>(&dummy) : static_cast<void*>(store.data()); }
  double dummy = 0;
};

inline void die(const std::string& msg) {
  std::fprintf(stderr, "pf_harness: %s\n", msg.c_str());
  std::exit(3);
}

inline std::vector<Rec> read_all(const char* path, int n) {
  std::FILE* f = std::fopen(path, "rb");
  if (!f) die(std::string("cannot open ") + path);
  std::vector<Rec> out(n);
  auto rd = [&](void* dst, size_t bytes) {
    if (bytes && std::fread(dst, 1, bytes, f) != bytes) die(std::string("truncated input ") + path);
  };
  for (int i = 0; i < n; ++i) {
    Rec& r = out[i];
    rd(&r.nd, 8);
    if (r.nd < 0 || r.nd > 15) die("bad rank in input");
    r.lb.resize(r.nd);
    r.ub.resize(r.nd);
    rd(r.lb.data(), 8 * r.nd);
    rd(r.ub.data(), 8 * r.nd);
    rd(&r.code, 8);
    rd(&r.nbytes, 8);
    r.store.assign((r.nbytes + 7) / 8 + 1, 0.0);
    rd(r.store.data(), r.nbytes);
  }
  std::fclose(f);
  return out;
}

inline void write_all(const char* path, std::vector<Rec>& recs) {
  std::FILE* f = std::fopen(path, "wb");
  if (!f) die(std::string("cannot write ") + path);
  for (Rec& r : recs) {
    std::fwrite(&r.nd, 8, 1, f);
    if (r.nd) {
      std::fwrite(r.lb.data(), 8, r.nd, f);
      std::fwrite(r.ub.data(), 8, r.nd, f);
    }
    std::fwrite(&r.code, 8, 1, f);
    std::fwrite(&r.nbytes, 8, 1, f);
    if (r.nbytes) std::fwrite(r.p(), 1, r.nbytes, f);
  }
  std::fclose(f);
}

inline double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace pf_harness
