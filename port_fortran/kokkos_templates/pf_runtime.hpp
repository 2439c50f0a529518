// pf_runtime.hpp -- written by port-fortran; the same file in every port.
//
// Arrays that stay on the device between calls of the ports (residency). Plain C++17, no
// Kokkos: pf_kokkos_compat.hpp binds it to Kokkos memory, tests bind it to a mock.
//
// The registry holds ranges of host memory the program registered (pf_resident: arrays of
// static storage -- COMMON blocks, module and main-program variables, SAVEd locals -- and
// allocated arrays until they are released), each with a device copy made on first use and
// a state saying which copy is current:
//
//   HostNewer    the host copy is current (the device copy, if any, is stale)
//   Same         both copies hold the same values
//   DeviceNewer  a port wrote the device copy; the host copy is stale
//
// A port's entry asks for the device address of each array argument (device_ptr): inside a
// registered range it gets the device copy, copied in only when the host may have changed it
// (HostNewer); after the kernel, an array the port wrote is marked DeviceNewer (device_wrote)
// and not copied back. Any other array goes through a copy per call as before (before_copy
// makes registered ranges it overlaps current on the host first; after_copy_write marks them
// HostNewer when the copy back wrote them).
//
// The host side stays coherent through calls the modern tree makes around host code that
// touches such arrays: host_read (copy back what a port wrote), host_write (the same, then
// HostNewer), release (before memory is freed). States are per registered range: a sync copies
// the whole range, so each copy is always entirely current or entirely stale.
#ifndef PF_RUNTIME_HPP
#define PF_RUNTIME_HPP

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <string>

namespace pf {

// Where device copies live. The Kokkos binding allocates in pf::MemSpace; tests count copies.
struct DeviceMemory {
  virtual ~DeviceMemory() = default;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p) = 0;
  virtual void to_device(void* dev, const void* host, std::size_t bytes) = 0;
  virtual void to_host(void* host, const void* dev, std::size_t bytes) = 0;
};

struct ResidencyCounters {
  long registered = 0;     // ranges registered
  long resident_uses = 0;  // array arguments served from a device copy
  long copies_in = 0;      // host -> device copies of registered ranges
  long copies_out = 0;     // device -> host copies of registered ranges
  long per_call_copies = 0;  // array arguments copied per call (not registered)
  std::size_t bytes_in = 0;
  std::size_t bytes_out = 0;
};

class Registry {
 public:
  enum class State { HostNewer, Same, DeviceNewer };
  struct Entry {
    char* host = nullptr;
    std::size_t bytes = 0;
    char* dev = nullptr;
    State state = State::HostNewer;
  };

  Registry() {
    const char* env = std::getenv("PF_RESIDENT");
    enabled_ = !(env && (env[0] == '0' || env[0] == 'n' || env[0] == 'N' || env[0] == 'f' || env[0] == 'F'));
  }

  void set_memory(DeviceMemory* mem) {
    std::lock_guard<std::mutex> lock(mu_);
    mem_ = mem;
  }
  void set_enabled(bool on) {
    std::lock_guard<std::mutex> lock(mu_);
    enabled_ = on;
  }
  bool enabled() const { return enabled_; }

  // Register [host, host + bytes): a range that stays valid until released. A range inside
  // a registered one is already covered; one overlapping others replaces them by the union.
  void add(const void* host, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!enabled_ || host == nullptr || bytes == 0) return;
    char* b = ptr(host);
    char* e = b + bytes;
    auto it = containing(b, bytes);
    if (it != entries_.end()) return;
    for (auto o = first_overlap(b, e); o != entries_.end() && o->second.host < e;) {
      sync_to_host(o->second);
      b = o->second.host < b ? o->second.host : b;
      e = o->second.host + o->second.bytes > e ? o->second.host + o->second.bytes : e;
      free_dev(o->second);
      o = entries_.erase(o);
    }
    Entry en;
    en.host = b;
    en.bytes = static_cast<std::size_t>(e - b);
    entries_.emplace(key(b), en);
    ++counters.registered;
  }

  // Host code is about to read [host, host + bytes) (bytes < 0: from host to the end of the
  // registered range holding it, for assumed-size arrays): copy back what a port wrote.
  void host_read(const void* host, long bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    for_each_overlap(host, bytes, [this](Entry& en) { sync_to_host(en); });
  }

  // Host code is about to write [host, host + bytes): current on the host, then HostNewer.
  void host_write(const void* host, long bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    for_each_overlap(host, bytes, [this](Entry& en) {
      sync_to_host(en);
      en.state = State::HostNewer;
    });
  }

  // The memory is about to be freed or reallocated: make the host copy current, forget the range.
  void release(const void* host, long bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    char* b = ptr(host);
    if (b == nullptr || entries_.empty()) return;
    char* e = bytes < 0 ? end_of_containing(b) : b + bytes;
    for (auto o = first_overlap(b, e); o != entries_.end() && o->second.host < e;) {
      sync_to_host(o->second);
      free_dev(o->second);
      o = entries_.erase(o);
    }
  }

  // A port's array argument [host, host + bytes): the address of its device copy when it lies
  // in one registered range (copied in first if the host may have changed it), else nullptr.
  void* device_ptr(const void* host, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!enabled_ || mem_ == nullptr || entries_.empty()) return nullptr;
    auto it = containing(ptr(host), bytes);
    if (it == entries_.end()) return nullptr;
    Entry& en = it->second;
    if (en.dev == nullptr) {
      en.dev = static_cast<char*>(mem_->allocate(en.bytes));
      en.state = State::HostNewer;
    }
    if (en.state == State::HostNewer) {
      mem_->to_device(en.dev, en.host, en.bytes);
      ++counters.copies_in;
      counters.bytes_in += en.bytes;
      en.state = State::Same;
    }
    ++counters.resident_uses;
    return en.dev + (ptr(host) - en.host);
  }

  // After a port wrote [host, host + bytes): true when it is resident (now DeviceNewer),
  // false when it went through a per-call copy (the caller copies it back).
  bool device_wrote(const void* host, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!enabled_ || mem_ == nullptr || entries_.empty()) return false;
    auto it = containing(ptr(host), bytes);
    if (it == entries_.end() || it->second.dev == nullptr) return false;
    it->second.state = State::DeviceNewer;
    return true;
  }

  // A per-call copy of [host, host + bytes) is about to be made: registered ranges it
  // overlaps must be current on the host first.
  void before_copy(const void* host, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters.per_call_copies;
    for_each_overlap(host, static_cast<long>(bytes), [this](Entry& en) { sync_to_host(en); });
  }

  // A per-call copy wrote [host, host + bytes) back: registered ranges it overlaps are HostNewer.
  void after_copy_write(const void* host, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    for_each_overlap(host, static_cast<long>(bytes), [](Entry& en) { en.state = State::HostNewer; });
  }

  // Free every device copy (before the device runtime shuts down); ranges stay registered.
  void clear_device() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& kv : entries_) {
      sync_to_host(kv.second);
      free_dev(kv.second);
      kv.second.state = State::HostNewer;
    }
  }

  void clear() {
    clear_device();
    std::lock_guard<std::mutex> lock(mu_);
    entries_.clear();
  }

  std::size_t size() const { return entries_.size(); }

  // The registered range holding ``host`` (nullptr if none): for tests and diagnostics.
  const Entry* find(const void* host) const {
    auto it = const_cast<Registry*>(this)->containing(ptr(host), 1);
    return it == entries_.end() ? nullptr : &it->second;
  }

  void print_counters(std::FILE* out) const {
    std::fprintf(out,
                 "port-fortran residency: %ld ranges registered, %ld resident uses, %ld copies in (%zu bytes), "
                 "%ld copies out (%zu bytes), %ld per-call copies\n",
                 counters.registered, counters.resident_uses, counters.copies_in, counters.bytes_in,
                 counters.copies_out, counters.bytes_out, counters.per_call_copies);
  }

  ResidencyCounters counters;

 private:
  using Map = std::map<std::uintptr_t, Entry>;
  static std::uintptr_t key(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }
  static char* ptr(const void* p) { return const_cast<char*>(static_cast<const char*>(p)); }

  // the entry holding all of [b, b + bytes), or end()
  Map::iterator containing(char* b, std::size_t bytes) {
    if (b == nullptr || entries_.empty()) return entries_.end();
    auto it = entries_.upper_bound(key(b));
    if (it == entries_.begin()) return entries_.end();
    --it;
    const Entry& en = it->second;
    if (b >= en.host && b + bytes <= en.host + en.bytes) return it;
    return entries_.end();
  }

  // the first entry whose range meets [b, e) (entries are disjoint, ordered by start)
  Map::iterator first_overlap(char* b, char* e) {
    auto it = entries_.upper_bound(key(b));
    if (it != entries_.begin()) {
      auto prev = std::prev(it);
      if (prev->second.host + prev->second.bytes > b) return prev;
    }
    if (it != entries_.end() && it->second.host < e) return it;
    return entries_.end();
  }

  char* end_of_containing(char* b) {
    auto it = containing(b, 1);
    return it == entries_.end() ? b : it->second.host + it->second.bytes;
  }

  template <class F>
  void for_each_overlap(const void* host, long bytes, F f) {
    char* b = ptr(host);
    if (b == nullptr || entries_.empty()) return;
    char* e = bytes < 0 ? end_of_containing(b) : b + bytes;
    if (e <= b) return;
    for (auto o = first_overlap(b, e); o != entries_.end() && o->second.host < e; ++o) f(o->second);
  }

  void sync_to_host(Entry& en) {
    if (en.state == State::DeviceNewer && en.dev != nullptr && mem_ != nullptr) {
      mem_->to_host(en.host, en.dev, en.bytes);
      ++counters.copies_out;
      counters.bytes_out += en.bytes;
      en.state = State::Same;
    }
  }

  void free_dev(Entry& en) {
    if (en.dev != nullptr && mem_ != nullptr) mem_->deallocate(en.dev);
    en.dev = nullptr;
  }

  Map entries_;
  DeviceMemory* mem_ = nullptr;
  bool enabled_ = true;
  std::mutex mu_;
};

// The program's registry (never destroyed: ports and the Fortran calls may run during exit).
inline Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

// ---------------------------------------------------------------- calls of each entry
// How often each extern "C" entry ran. With PF_CALL_COUNTS=<file> in the environment the
// counts are written there at exit, one "<entry> <calls>" line each: a program proven by its
// output (`port-fortran program`, main programs in a run) shows which kernels the run
// exercised, so a run that never reached a kernel does not count as its proof.
class CallCounts {
 public:
  long& counter(const char* name) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!registered_) {
      registered_ = true;
      std::atexit(&CallCounts::write_at_exit);
    }
    return counts_[name];  // std::map nodes never move: the reference stays valid
  }
  static void write_at_exit();
  std::map<std::string, long> counts_;

 private:
  std::mutex mu_;
  bool registered_ = false;
};

inline CallCounts& call_counts() {
  static CallCounts* c = new CallCounts();
  return *c;
}

inline void CallCounts::write_at_exit() {
  const char* path = std::getenv("PF_CALL_COUNTS");
  if (!path || !*path) return;
  if (FILE* f = std::fopen(path, "a")) {
    for (const auto& kv : call_counts().counts_) std::fprintf(f, "%s %ld\n", kv.first.c_str(), kv.second);
    std::fclose(f);
  }
}

// In an entry: `static long& n = pf::call_counter("name"); ++n;` (one map lookup per entry).
inline long& call_counter(const char* name) { return call_counts().counter(name); }

}  // namespace pf

#endif  // PF_RUNTIME_HPP
