// pf_strings.hpp -- written by port-fortran; the same file in every port (included by
// pf_kokkos_compat.hpp): the CHARACTER string runtime of the rules translator
// (translate/cstrings.py). Plain C++ and KOKKOS_INLINE_FUNCTION only: builds against
// Kokkos 3.4 to 5.x alike.
#ifndef PF_STRINGS_HPP
#define PF_STRINGS_HPP

#include <Kokkos_Core.hpp>
#include <vector>

namespace pf {

// A Fortran CHARACTER(len=n) variable is n bytes with no terminator: pf::Str points at them
// (a dummy: the caller's bytes and the length gfortran passes; a local: a buffer of the
// port). Fortran semantics (F2018 10.1.5.5, 10.2.1.3): assignment pads with blanks or
// truncates; comparison pads the shorter operand with blanks; positions are 1-based.
struct Str {
  char* p;
  long n;
};
// a local CHARACTER(len=N): its own bytes, blank at the start (Fortran leaves them undefined)
template <int N>
struct Chars {
  char b[N > 0 ? N : 1];
  KOKKOS_INLINE_FUNCTION Chars() {
    for (int i = 0; i < N; ++i) b[i] = ' ';
  }
  KOKKOS_INLINE_FUNCTION operator Str() { return Str{b, N}; }
  // an element of a const View (an intent(in) array of strings) is read through the same Str
  KOKKOS_INLINE_FUNCTION operator Str() const { return Str{const_cast<char*>(b), N}; }
};
KOKKOS_INLINE_FUNCTION Str str(char* p, long n) { return Str{p, n < 0 ? 0 : n}; }
KOKKOS_INLINE_FUNCTION Str str(const char* p, long n) { return Str{const_cast<char*>(p), n < 0 ? 0 : n}; }
// s(lo:hi): zero length when hi < lo
KOKKOS_INLINE_FUNCTION Str sub(Str s, long lo, long hi) { return Str{s.p + (lo - 1), hi >= lo ? hi - lo + 1 : 0}; }
// s(i:i) read as one character
KOKKOS_INLINE_FUNCTION char at(Str s, long i) { return s.p[i - 1]; }
KOKKOS_INLINE_FUNCTION long len(Str s) { return s.n; }
KOKKOS_INLINE_FUNCTION long len(char) { return 1; }
// d = s: the bytes of s, blank padded or truncated to d's length; d and s may overlap
KOKKOS_INLINE_FUNCTION void assign(Str d, Str s) {
  long m = s.n < d.n ? s.n : d.n;
  if (d.p < s.p) {
    for (long i = 0; i < m; ++i) d.p[i] = s.p[i];
  } else {
    for (long i = m - 1; i >= 0; --i) d.p[i] = s.p[i];
  }
  for (long i = m; i < d.n; ++i) d.p[i] = ' ';
}
KOKKOS_INLINE_FUNCTION void assign(Str d, char c) {
  if (d.n > 0) d.p[0] = c;
  for (long i = 1; i < d.n; ++i) d.p[i] = ' ';
}
KOKKOS_INLINE_FUNCTION void assign(char& d, Str s) { d = s.n > 0 ? s.p[0] : ' '; }
KOKKOS_INLINE_FUNCTION void assign(char& d, char c) { d = c; }
// <0, 0, >0 as a is before, equal to, after b in the collating sequence (ASCII, unsigned),
// the shorter operand padded with blanks
KOKKOS_INLINE_FUNCTION int compare(Str a, Str b) {
  long n = a.n > b.n ? a.n : b.n;
  for (long i = 0; i < n; ++i) {
    unsigned char x = i < a.n ? static_cast<unsigned char>(a.p[i]) : ' ';
    unsigned char y = i < b.n ? static_cast<unsigned char>(b.p[i]) : ' ';
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}
KOKKOS_INLINE_FUNCTION int compare(Str a, char b) { return compare(a, Str{&b, 1}); }
KOKKOS_INLINE_FUNCTION int compare(char a, Str b) { return compare(Str{&a, 1}, b); }
KOKKOS_INLINE_FUNCTION int compare(char a, char b) { return compare(Str{&a, 1}, Str{&b, 1}); }
KOKKOS_INLINE_FUNCTION int ichar(char c) { return static_cast<unsigned char>(c); }
KOKKOS_INLINE_FUNCTION int ichar(Str s) { return static_cast<unsigned char>(s.p[0]); }
KOKKOS_INLINE_FUNCTION char first(Str s) { return s.p[0]; }
KOKKOS_INLINE_FUNCTION char first(char c) { return c; }
// LEN_TRIM: the length without trailing blanks
KOKKOS_INLINE_FUNCTION long len_trim(Str s) {
  long n = s.n;
  while (n > 0 && s.p[n - 1] == ' ') --n;
  return n;
}
KOKKOS_INLINE_FUNCTION long len_trim(char c) { return c == ' ' ? 0 : 1; }
// INDEX(s, t[, back]): the first (last) position where t starts in s, 0 if none; an empty t
// is found at 1 (at len(s) + 1 with back)
KOKKOS_INLINE_FUNCTION long index(Str s, Str t, bool back = false) {
  if (t.n > s.n) return 0;
  if (!back) {
    for (long i = 0; i + t.n <= s.n; ++i) {
      long k = 0;
      while (k < t.n && s.p[i + k] == t.p[k]) ++k;
      if (k == t.n) return i + 1;
    }
  } else {
    for (long i = s.n - t.n; i >= 0; --i) {
      long k = 0;
      while (k < t.n && s.p[i + k] == t.p[k]) ++k;
      if (k == t.n) return i + 1;
    }
  }
  return 0;
}
KOKKOS_INLINE_FUNCTION long index(Str s, char c, bool back = false) { return index(s, Str{&c, 1}, back); }
KOKKOS_INLINE_FUNCTION long index(char a, Str t, bool back = false) { return index(Str{&a, 1}, t, back); }
KOKKOS_INLINE_FUNCTION long index(char a, char c, bool back = false) { return index(Str{&a, 1}, Str{&c, 1}, back); }

// a CHARACTER local whose length is computed at entry (character(len=len_trim(s)) :: t):
// its own host bytes, blank at the start; such strings stay on the host
struct Buf {
  std::vector<char> b;
  explicit Buf(long n) : b(n > 0 ? static_cast<std::size_t>(n) : 0, ' ') {}
  operator Str() { return Str{b.data(), static_cast<long>(b.size())}; }
};

}  // namespace pf

#endif  // PF_STRINGS_HPP
