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

// Each argument's bytes sit between two guard zones filled with a pattern: a port that
// writes outside an argument (one element past the end, a negative offset from a stride)
// is reported by name instead of corrupting the driver's heap (a crash, or records that
// no longer match their headers).
constexpr size_t kGuardWords = 8;  // 64 bytes on each side
constexpr unsigned char kGuardByte = 0xA5;

struct Rec {
  int64_t nd = 0, code = 0, nbytes = 0;
  std::vector<int64_t> lb, ub;
  std::vector<double> store;  // 8-byte aligned: [guard][data, padded to 8 bytes][guard]
  void* p() { return static_cast<void*>(store.data() + kGuardWords); }
  size_t words() const { return (static_cast<size_t>(nbytes) + 7) / 8; }
  void allocate() {
    store.assign(words() + 2 * kGuardWords, 0.0);
    unsigned char* b = reinterpret_cast<unsigned char*>(store.data());
    std::memset(b, kGuardByte, 8 * kGuardWords);
    std::memset(b + 8 * kGuardWords + nbytes, kGuardByte, 8 * (words() + kGuardWords) - nbytes);
  }
  // bytes written before the start and after the end (0, 0 when the guards are intact)
  void overrun(size_t& before, size_t& after) const {
    const unsigned char* b = reinterpret_cast<const unsigned char*>(store.data());
    size_t front = 8 * kGuardWords, back = 8 * (words() + kGuardWords) - nbytes;
    before = after = 0;
    for (size_t i = 0; i < front; ++i)
      if (b[i] != kGuardByte) { before = front - i; break; }
    const unsigned char* t = b + front + nbytes;
    for (size_t i = back; i > 0; --i)
      if (t[i - 1] != kGuardByte) { after = i; break; }
  }
};

inline void die(const std::string& msg) {
  std::fprintf(stderr, "pf_harness: %s\n", msg.c_str());
  std::exit(3);
}

// After the port ran: every argument's guards intact, else die naming the argument.
inline void check_guards(std::vector<Rec>& recs, const char* const* names) {
  for (size_t i = 0; i < recs.size(); ++i) {
    size_t before = 0, after = 0;
    recs[i].overrun(before, after);
    if (before || after)
      die(std::string("the port wrote outside argument ") + names[i] + " (" +
          (after ? std::to_string(after) + " byte(s) past its end" : "") + (after && before ? ", " : "") +
          (before ? std::to_string(before) + " byte(s) before its start" : "") + ", " +
          std::to_string(recs[i].nbytes) + " bytes long)");
  }
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
    if (r.nbytes < 0) die("bad byte count in input");
    r.allocate();
    rd(r.p(), r.nbytes);
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
