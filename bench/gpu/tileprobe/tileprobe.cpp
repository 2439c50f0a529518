// What a scratch-memory tiled matrix product reaches through Kokkos, beside the register
// blocking the translator emits today: C(i, j) += sum_l A(i, l) * B(l, j), column-major
// (LayoutLeft, as Fortran), every element summing its terms in the original order.
// Written by us (bench only): tileprobe <n> <repeats>; prints GFLOP/s per variant, median.
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>
#include <algorithm>
#include <cstdio>
#include <vector>

using View = Kokkos::View<double**, Kokkos::LayoutLeft>;
using Exec = Kokkos::DefaultExecutionSpace;
// MINB > 0: Kokkos::LaunchBounds<NT, MINB> (at least MINB teams per multiprocessor)
template <int NT, int MINB>
using PolicyOf = typename std::conditional<MINB == 0, Kokkos::TeamPolicy<Exec>,
                                           Kokkos::TeamPolicy<Exec, Kokkos::LaunchBounds<NT, MINB>>>::type;
template <int NT, int MINB>
using TeamOf = typename PolicyOf<NT, MINB>::member_type;

static void naive(View a, View b, View c, int n) {
  Kokkos::parallel_for("naive", Kokkos::MDRangePolicy<Kokkos::Rank<2, Kokkos::Iterate::Left>>({0, 0}, {n, n}),
      KOKKOS_LAMBDA(int i, int j) {
        double t = c(i, j);
        for (int l = 0; l < n; ++l) t += a(i, l) * b(l, j);
        c(i, j) = t;
      });
}

template <int R>
static void regblock(View a, View b, View c, int n) {  // what regblock-8x8 emits (full blocks only)
  const int nb = n / R;
  Kokkos::parallel_for("regblock", Kokkos::MDRangePolicy<Kokkos::Rank<2, Kokkos::Iterate::Left>>({0, 0}, {nb, nb}),
      KOKKOS_LAMBDA(int bi, int bj) {
        const int i0 = bi * R, j0 = bj * R;
        double t[R][R];
        for (int x = 0; x < R; ++x) for (int y = 0; y < R; ++y) t[x][y] = c(i0 + x, j0 + y);
        for (int l = 0; l < n; ++l) {
          double av[R], bv[R];
          for (int x = 0; x < R; ++x) av[x] = a(i0 + x, l);
          for (int y = 0; y < R; ++y) bv[y] = b(l, j0 + y);
          for (int x = 0; x < R; ++x) for (int y = 0; y < R; ++y) t[x][y] += av[x] * bv[y];
        }
        for (int x = 0; x < R; ++x) for (int y = 0; y < R; ++y) c(i0 + x, j0 + y) = t[x][y];
      });
}

// a team per TM x TN tile of C, TX x TY threads each owning RM x RN elements strided by
// TX (rows) and TY (columns); the team stages TK columns of A and TK rows of B in scratch
template <int TX, int TY, int RM, int RN, int TK, int MINB = 0>
static void tiled(View a, View b, View c, int m, int n, int k) {
  constexpr int TM = TX * RM, TN = TY * RN, NT = TX * TY;
  const int tiles_i = (m + TM - 1) / TM, tiles_j = (n + TN - 1) / TN;
  using Scr = Kokkos::View<double*, Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const size_t bytes = Scr::shmem_size(TM * TK) + Scr::shmem_size(TK * TN);
  PolicyOf<NT, MINB> pol(tiles_i * tiles_j, NT);
  Kokkos::parallel_for("tiled", pol.set_scratch_size(0, Kokkos::PerTeam(bytes)), KOKKOS_LAMBDA(const TeamOf<NT, MINB>& tm) {
    Scr sa(tm.team_scratch(0), TM * TK), sb(tm.team_scratch(0), TK * TN);
    const int ti = tm.league_rank() % tiles_i, tj = tm.league_rank() / tiles_i;
    const int i0 = ti * TM, j0 = tj * TN, r = tm.team_rank(), tx = r % TX, ty = r / TX;
    double t[RM][RN];
    for (int x = 0; x < RM; ++x) for (int y = 0; y < RN; ++y) {
      const int i = i0 + tx + TX * x, j = j0 + ty + TY * y;
      t[x][y] = (i < m && j < n) ? c(i, j) : 0.0;
    }
    for (int l0 = 0; l0 < k; l0 += TK) {
      const int kk = k - l0 < TK ? k - l0 : TK;
      for (int e = r; e < TM * TK; e += NT) {  // column-major: rows of A adjacent
        const int row = e % TM, col = e / TM;
        sa(e) = (i0 + row < m && col < kk) ? a(i0 + row, l0 + col) : 0.0;
      }
      for (int e = r; e < TK * TN; e += NT) {
        const int row = e % TK, col = e / TK;
        sb(e) = (row < kk && j0 + col < n) ? b(l0 + row, j0 + col) : 0.0;
      }
      tm.team_barrier();
      for (int l = 0; l < kk; ++l) {
        double av[RM], bv[RN];
        for (int x = 0; x < RM; ++x) av[x] = sa(l * TM + tx + TX * x);
        for (int y = 0; y < RN; ++y) bv[y] = sb((ty + TY * y) * TK + l);
        for (int x = 0; x < RM; ++x) for (int y = 0; y < RN; ++y) t[x][y] += av[x] * bv[y];
      }
      tm.team_barrier();
    }
    for (int x = 0; x < RM; ++x) for (int y = 0; y < RN; ++y) {
      const int i = i0 + tx + TX * x, j = j0 + ty + TY * y;
      if (i < m && j < n) c(i, j) = t[x][y];
    }
  });
}

template <class F>
static double time_it(F f, View c, int repeats) {
  std::vector<double> ts;
  for (int rep = 0; rep < repeats; ++rep) {
    Kokkos::deep_copy(c, 0.0);
    Kokkos::fence();
    Kokkos::Timer tm;
    f();
    Kokkos::fence();
    ts.push_back(tm.seconds());
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    const int n = argc > 1 ? atoi(argv[1]) : 4096, repeats = argc > 2 ? atoi(argv[2]) : 5;
    View a("a", n, n), b("b", n, n), c("c", n, n), ref("ref", n, n);
    Kokkos::Random_XorShift64_Pool<Exec> pool(7);
    Kokkos::fill_random(a, pool, -1.0, 1.0);
    Kokkos::fill_random(b, pool, -1.0, 1.0);
    const double flop = 2.0 * n * (double)n * n;
    Kokkos::deep_copy(ref, 0.0);
    naive(a, b, ref, n);
    auto report = [&](const char* name, double s) {
      double diff = 0.0;
      Kokkos::parallel_reduce("diff", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {n, n}),
          KOKKOS_LAMBDA(int i, int j, double& d) { const double e = c(i, j) - ref(i, j); const double ae = e < 0 ? -e : e; if (ae > d) d = ae; },
          Kokkos::Max<double>(diff));
      std::printf("%-28s n=%d  %9.1f GFLOP/s  max|diff| vs naive %.3g\n", name, n, flop / s * 1e-9, diff);
      std::fflush(stdout);
    };
    report("naive mdrange", time_it([&] { naive(a, b, c, n); }, c, repeats));
    report("regblock 8x8 (mdrange)", time_it([&] { regblock<8>(a, b, c, n); }, c, repeats));
    report("tiled 64x64 4x4 k16", time_it([&] { tiled<16, 16, 4, 4, 16>(a, b, c, n, n, n); }, c, repeats));
    report("tiled 128x128 8x8 k8", time_it([&] { tiled<16, 16, 8, 8, 8>(a, b, c, n, n, n); }, c, repeats));
    report("tiled 128x128 8x8 k16", time_it([&] { tiled<16, 16, 8, 8, 16>(a, b, c, n, n, n); }, c, repeats));
    report("tiled 128x64 8x4 k16", time_it([&] { tiled<16, 16, 8, 4, 16>(a, b, c, n, n, n); }, c, repeats));
    report("tiled 64x128 4x8 k16", time_it([&] { tiled<16, 16, 4, 8, 16>(a, b, c, n, n, n); }, c, repeats));
    report("tiled 128x64 8x4 k8", time_it([&] { tiled<16, 16, 8, 4, 8>(a, b, c, n, n, n); }, c, repeats));
    report("tiled 128x64 8x4 k16 lb2", time_it([&] { tiled<16, 16, 8, 4, 16, 2>(a, b, c, n, n, n); }, c, repeats));
    report("tiled 128x64 (32x8) 4x8 k16", time_it([&] { tiled<32, 8, 4, 8, 16>(a, b, c, n, n, n); }, c, repeats));
    report("tiled 128x128 (32x8) 4x16 k8", time_it([&] { tiled<32, 8, 4, 16, 8>(a, b, c, n, n, n); }, c, repeats));
    report("tiled 64x64 (16x8) 4x8 k16", time_it([&] { tiled<16, 8, 4, 8, 16>(a, b, c, n, n, n); }, c, repeats));
  }
  Kokkos::finalize();
}
