"""A program run in which time runs a thousand times faster: which printed numbers are timings.

A benchmark prints how long its kernel took (a C clock's seconds, a rate, a tick count) next
to its results. No port reproduces those numbers, and a kernel of a few microseconds prints
the same timing in every run of the original, so comparing runs of the original cannot
tell them from results. Run once more with the C library's clocks dilated -- every clock
read through ``clock_gettime``, ``gettimeofday``, ``time``, ``clock`` or ``getrusage``
(what gfortran's ``system_clock``/``cpu_time``, ``omp_get_wtime`` and C timers call) starts
from an offset, runs ``SCALE`` times faster and moves on 1.25 ms at every reading, so that
even an interval too short for the clock to see is not 0 (an ``LD_PRELOAD`` library built here) --
every number derived from a clock changes, and nothing else does: the numbers that differ
from the plain run on otherwise identical lines are the timings
(``textcompare.timing_mask``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..build_runner.sandbox import Limits, run_limited

SCALE = 1000

_SOURCE = r"""
/* written by port-fortran (harness/dilate.py): clocks that start at an offset, run SCALE
   times faster and move on at every reading, for one run of a program under LD_PRELOAD */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <time.h>
#include <sys/time.h>
#include <sys/resource.h>

#define SCALE %(scale)d
#define OFFSET_NS 7250000000LL /* 7.25 s ahead: absolute readings change too */

#define STEP_NS 1250000LL /* and every reading 1.25 ms after the one before: no interval is 0 */

static int64_t base_ns[32];
static int64_t reads[32];
static int have[32];

static int64_t dilate(int slot, int64_t ns) {
  if (slot < 0 || slot >= 32) return ns;
  if (!have[slot]) { base_ns[slot] = ns; have[slot] = 1; }
  return base_ns[slot] + OFFSET_NS + (ns - base_ns[slot]) * SCALE + STEP_NS * reads[slot]++;
}

int clock_gettime(clockid_t c, struct timespec *ts) {
  static int (*real)(clockid_t, struct timespec *);
  if (!real) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
  int r = real(c, ts);
  if (r == 0 && ts) {
    int64_t ns = dilate((int)c, (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec);
    ts->tv_sec = (time_t)(ns / 1000000000LL);
    ts->tv_nsec = (long)(ns %% 1000000000LL);
  }
  return r;
}

int gettimeofday(struct timeval *tv, void *tz) {
  static int (*real)(struct timeval *, void *);
  if (!real) real = (int (*)(struct timeval *, void *))dlsym(RTLD_NEXT, "gettimeofday");
  int r = real(tv, tz);
  if (r == 0 && tv) {
    int64_t ns = dilate(20, (int64_t)tv->tv_sec * 1000000000LL + (int64_t)tv->tv_usec * 1000LL);
    tv->tv_sec = (time_t)(ns / 1000000000LL);
    tv->tv_usec = (long)((ns %% 1000000000LL) / 1000LL);
  }
  return r;
}

time_t time(time_t *t) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (t) *t = ts.tv_sec;
  return ts.tv_sec;
}

clock_t clock(void) {
  static clock_t (*real)(void);
  if (!real) real = (clock_t (*)(void))dlsym(RTLD_NEXT, "clock");
  clock_t c = real();
  return c == (clock_t)-1 ? c : (clock_t)(c * SCALE + 7 * CLOCKS_PER_SEC);
}

int getrusage(int who, struct rusage *u) {
  static int (*real)(int, struct rusage *);
  if (!real) real = (int (*)(int, struct rusage *))dlsym(RTLD_NEXT, "getrusage");
  int r = real(who, u);
  if (r == 0 && u) {
    int64_t us = ((int64_t)u->ru_utime.tv_sec * 1000000LL + u->ru_utime.tv_usec) * SCALE + 7000000LL;
    u->ru_utime.tv_sec = (time_t)(us / 1000000LL);
    u->ru_utime.tv_usec = (long)(us %% 1000000LL);
    us = ((int64_t)u->ru_stime.tv_sec * 1000000LL + u->ru_stime.tv_usec) * SCALE;
    u->ru_stime.tv_sec = (time_t)(us / 1000000LL);
    u->ru_stime.tv_usec = (long)(us %% 1000000LL);
  }
  return r;
}
"""


def dilation_library(where: Path) -> Optional[Path]:
    """The LD_PRELOAD library (built once in ``where``), or None when no C compiler can
    build it (the proof then goes without it)."""
    from ..errors import ToolMissing
    from .csources import c_compiler

    lib = Path(where) / "libpf_dilate.so"
    if lib.exists():
        return lib
    Path(where).mkdir(parents=True, exist_ok=True)
    src = Path(where) / "pf_dilate.c"
    src.write_text(_SOURCE % {"scale": SCALE})
    try:
        cc = c_compiler()
    except ToolMissing:  # no C compiler: no dilated run
        return None
    res = run_limited([cc, "-shared", "-fPIC", "-O2", str(src), "-o", str(lib), "-ldl"], Path(where),
                      Limits(wall_s=120.0, cpu_s=None, mem_mb=None))
    return lib if res.ok and lib.exists() else None
