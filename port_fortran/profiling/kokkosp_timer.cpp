// kokkosp_timer.cpp -- port-fortran's own Kokkos Tools profiling library.
//
// Kokkos loads this shared library at Kokkos::initialize() when KOKKOS_TOOLS_LIBS (Kokkos
// 4.x+) or KOKKOS_PROFILE_LIBRARY (Kokkos 3.x; deprecated but still read by 4.x) names it,
// and calls the extern "C" kokkosp_* callbacks below. No Kokkos header is needed: the
// callbacks only use the C types of the Kokkos Tools interface, whose signatures have not
// changed from Kokkos 3.4 to 4.x.
//
// It accumulates, per (kind, name): launches, total / min / max seconds (steady_clock) for
// parallel_for, parallel_reduce, parallel_scan, fences and profile regions; and per
// (destination space, source space): deep copies, bytes and time. At
// kokkosp_finalize_library() it writes one JSON document to the path in the environment
// variable PF_KOKKOSP_OUTPUT (default ./kokkosp.json), through a temporary file and a
// rename, so a reader never sees half a file. If the program exits without finalizing
// Kokkos, a library destructor writes the same document with "finalized": false.
//
// PF_KOKKOSP_WARMUP=N (default 0) leaves the first N completions of every entry (kernel
// label, fence, deep-copy direction, region) out of its times, counting them as "skipped":
// a harness that warms up before timing gets steady-state numbers (the first launch on a
// GPU also pays for loading the module).
//
// We do not answer kokkosp_request_tool_settings, so Kokkos keeps its default of a global
// fence before each kernel begin/end callback: on asynchronous backends (CUDA, HIP) the
// time between begin and end then covers the kernel's execution, not just its launch.
//
// Thread safety: callbacks may come from several host threads (OpenMP code that launches
// kernels from a parallel region); all shared state is behind one mutex, and the deep-copy
// and region stacks are per thread.

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kFormatVersion = 1;
constexpr std::size_t kMaxMetadata = 256;

std::uint64_t g_warmup = 0;  // set at init from PF_KOKKOSP_WARMUP

struct Stat {
  std::uint64_t count = 0;
  std::uint64_t skipped = 0;
  double total = 0.0;
  double min = std::numeric_limits<double>::infinity();
  double max = 0.0;
  std::uint64_t bytes = 0;

  void add(double s, std::uint64_t nbytes = 0) {
    if (skipped < g_warmup) {
      ++skipped;
      return;
    }
    ++count;
    total += s;
    bytes += nbytes;
    if (s < min) min = s;
    if (s > max) max = s;
  }
};

struct Open {
  Stat* stat;
  Clock::time_point start;
};

struct Pending {  // a deep copy or a region, waiting for its end on this thread
  Stat* stat;
  Clock::time_point start;
  std::uint64_t bytes;
};

// Kinds of the events timed by a begin/end pair carrying an id.
enum Kind { kFor = 0, kReduce = 1, kScan = 2, kFence = 3, kNumKinds = 4 };
const char* const kKindNames[kNumKinds] = {"parallel_for", "parallel_reduce",
                                           "parallel_scan", "fence"};

struct State {
  std::mutex mu;
  std::uint64_t next_id = 1;
  std::unordered_map<std::uint64_t, Open> open;
  std::map<std::string, Stat> by_kind[kNumKinds];
  std::map<std::pair<std::string, std::string>, Stat> deep_copies;  // (dst, src)
  std::map<std::string, Stat> regions;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::uint64_t unmatched_ends = 0;
  bool initialized = false;
  bool written = false;
  int load_seq = 0;
  std::uint64_t interface_version = 0;
  Clock::time_point t_init = Clock::now();
};

// Never destroyed: callbacks may still arrive while other libraries' static objects are
// being torn down at exit.
State& state() {
  static State* s = new State();
  return *s;
}

thread_local std::vector<Pending> tl_deep_copies;
thread_local std::vector<Pending> tl_regions;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string text(const char* s) { return s ? std::string(s) : std::string(); }

void begin(Kind kind, const char* name, std::uint64_t* id) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  Stat* stat = &st.by_kind[kind][text(name)];
  const std::uint64_t my_id = st.next_id++;
  if (id) *id = my_id;
  st.open[my_id] = Open{stat, Clock::now()};
}

void end(std::uint64_t id) {
  const Clock::time_point now = Clock::now();
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.open.find(id);
  if (it == st.open.end()) {
    ++st.unmatched_ends;
    return;
  }
  it->second.stat->add(seconds(it->second.start, now));
  st.open.erase(it);
}

// ----------------------------------------------------------------- JSON output

void put_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);  // UTF-8 passes through; the reader replaces bad bytes
        }
    }
  }
  out += '"';
}

void put_number(std::string& out, double v) {
  if (!std::isfinite(v)) v = 0.0;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9e", v);
  out += buf;
}

void put_uint(std::string& out, std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRIu64, v);
  out += buf;
}

void put_times(std::string& out, const Stat& s) {
  out += "\"count\": ";
  put_uint(out, s.count);
  out += ", \"skipped\": ";
  put_uint(out, s.skipped);
  out += ", \"total_s\": ";
  put_number(out, s.total);
  out += ", \"min_s\": ";
  put_number(out, s.count ? s.min : 0.0);
  out += ", \"max_s\": ";
  put_number(out, s.max);
}

std::string render(State& st, bool finalized) {
  std::string out;
  out += "{\n  \"tool\": \"pf_kokkosp\",\n  \"format\": ";
  put_uint(out, kFormatVersion);
  out += ",\n  \"interface_version\": ";
  put_uint(out, st.interface_version);
  out += ",\n  \"finalized\": ";
  out += finalized ? "true" : "false";
  out += ",\n  \"pid\": ";
  put_uint(out, static_cast<std::uint64_t>(getpid()));
  out += ",\n  \"wall_s\": ";
  put_number(out, seconds(st.t_init, Clock::now()));
  out += ",\n  \"open_at_end\": ";
  put_uint(out, st.open.size());
  out += ",\n  \"unmatched_ends\": ";
  put_uint(out, st.unmatched_ends);
  out += ",\n  \"warmup\": ";
  put_uint(out, g_warmup);

  bool first = true;
  out += ",\n  \"kernels\": [";
  for (int k = kFor; k <= kScan; ++k) {
    for (const auto& kv : st.by_kind[k]) {
      if (kv.second.count == 0 && kv.second.skipped == 0) continue;
      out += first ? "\n    {" : ",\n    {";
      first = false;
      out += "\"kind\": ";
      put_string(out, kKindNames[k]);
      out += ", \"name\": ";
      put_string(out, kv.first);
      out += ", ";
      put_times(out, kv.second);
      out += '}';
    }
  }
  out += first ? "]" : "\n  ]";

  first = true;
  out += ",\n  \"fences\": [";
  for (const auto& kv : st.by_kind[kFence]) {
    if (kv.second.count == 0 && kv.second.skipped == 0) continue;
    out += first ? "\n    {" : ",\n    {";
    first = false;
    out += "\"name\": ";
    put_string(out, kv.first);
    out += ", ";
    put_times(out, kv.second);
    out += '}';
  }
  out += first ? "]" : "\n  ]";

  first = true;
  out += ",\n  \"deep_copies\": [";
  for (const auto& kv : st.deep_copies) {
    out += first ? "\n    {" : ",\n    {";
    first = false;
    out += "\"dst_space\": ";
    put_string(out, kv.first.first);
    out += ", \"src_space\": ";
    put_string(out, kv.first.second);
    out += ", \"bytes\": ";
    put_uint(out, kv.second.bytes);
    out += ", ";
    put_times(out, kv.second);
    out += '}';
  }
  out += first ? "]" : "\n  ]";

  first = true;
  out += ",\n  \"regions\": [";
  for (const auto& kv : st.regions) {
    if (kv.second.count == 0 && kv.second.skipped == 0) continue;
    out += first ? "\n    {" : ",\n    {";
    first = false;
    out += "\"name\": ";
    put_string(out, kv.first);
    out += ", ";
    put_times(out, kv.second);
    out += '}';
  }
  out += first ? "]" : "\n  ]";

  first = true;
  out += ",\n  \"metadata\": {";
  for (const auto& kv : st.metadata) {
    out += first ? "\n    " : ",\n    ";
    first = false;
    put_string(out, kv.first);
    out += ": ";
    put_string(out, kv.second);
  }
  out += first ? "}" : "\n  }";
  out += "\n}\n";
  return out;
}

void write_output(bool finalized) {
  State& st = state();
  std::string doc;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (st.written || !st.initialized) return;
    st.written = true;
    doc = render(st, finalized);
  }
  const char* env = std::getenv("PF_KOKKOSP_OUTPUT");
  const std::string path = (env && *env) ? std::string(env) : std::string("kokkosp.json");
  const std::string tmp = path + ".tmp." + std::to_string(static_cast<long>(getpid()));
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "pf_kokkosp: cannot write %s\n", tmp.c_str());
    return;
  }
  const bool ok = std::fwrite(doc.data(), 1, doc.size(), f) == doc.size();
  if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "pf_kokkosp: cannot write %s\n", path.c_str());
    std::remove(tmp.c_str());
  }
}

// Programs that exit without Kokkos::finalize() still leave a profile.
__attribute__((destructor)) void write_at_unload() { write_output(false); }

}  // namespace

// ----------------------------------------------------------------- Kokkos Tools C interface

extern "C" {

struct Kokkos_Profiling_SpaceHandle {  // layout fixed by the Kokkos Tools interface
  char name[64];
};

void kokkosp_init_library(const int loadSeq, const uint64_t interfaceVer,
                          const uint32_t /*devInfoCount*/, void* /*deviceInfo*/) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  st.initialized = true;
  st.written = false;
  st.load_seq = loadSeq;
  st.interface_version = interfaceVer;
  const char* warm = std::getenv("PF_KOKKOSP_WARMUP");
  g_warmup = (warm && *warm) ? std::strtoull(warm, nullptr, 10) : 0;
  st.t_init = Clock::now();
}

void kokkosp_finalize_library() { write_output(true); }

void kokkosp_begin_parallel_for(const char* name, const uint32_t /*devID*/, uint64_t* kID) {
  begin(kFor, name, kID);
}
void kokkosp_end_parallel_for(const uint64_t kID) { end(kID); }

void kokkosp_begin_parallel_reduce(const char* name, const uint32_t /*devID*/, uint64_t* kID) {
  begin(kReduce, name, kID);
}
void kokkosp_end_parallel_reduce(const uint64_t kID) { end(kID); }

void kokkosp_begin_parallel_scan(const char* name, const uint32_t /*devID*/, uint64_t* kID) {
  begin(kScan, name, kID);
}
void kokkosp_end_parallel_scan(const uint64_t kID) { end(kID); }

void kokkosp_begin_fence(const char* name, const uint32_t /*devID*/, uint64_t* handle) {
  begin(kFence, name, handle);
}
void kokkosp_end_fence(const uint64_t handle) { end(handle); }

void kokkosp_begin_deep_copy(Kokkos_Profiling_SpaceHandle dst_handle, const char* /*dst_name*/,
                             const void* /*dst_ptr*/, Kokkos_Profiling_SpaceHandle src_handle,
                             const char* /*src_name*/, const void* /*src_ptr*/, uint64_t size) {
  State& st = state();
  Stat* stat;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    const std::string dst(dst_handle.name, strnlen(dst_handle.name, sizeof dst_handle.name));
    const std::string src(src_handle.name, strnlen(src_handle.name, sizeof src_handle.name));
    stat = &st.deep_copies[std::make_pair(dst, src)];
  }
  tl_deep_copies.push_back(Pending{stat, Clock::now(), size});
}

void kokkosp_end_deep_copy() {
  const Clock::time_point now = Clock::now();
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  if (tl_deep_copies.empty()) {
    ++st.unmatched_ends;
    return;
  }
  Pending p = tl_deep_copies.back();
  tl_deep_copies.pop_back();
  p.stat->add(seconds(p.start, now), p.bytes);
}

void kokkosp_push_profile_region(const char* name) {
  State& st = state();
  Stat* stat;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    stat = &st.regions[text(name)];
  }
  tl_regions.push_back(Pending{stat, Clock::now(), 0});
}

void kokkosp_pop_profile_region() {
  const Clock::time_point now = Clock::now();
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  if (tl_regions.empty()) {
    ++st.unmatched_ends;
    return;
  }
  Pending p = tl_regions.back();
  tl_regions.pop_back();
  p.stat->add(seconds(p.start, now));
}

void kokkosp_declare_metadata(const char* key, const char* value) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  if (st.metadata.size() < kMaxMetadata) st.metadata.emplace_back(text(key), text(value));
}

}  // extern "C"
