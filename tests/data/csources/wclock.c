/* a wall clock for Fortran (call wclock(t)), as C timers of benchmarks are */
#include <time.h>
void wclock_(double *t) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  *t = ts.tv_sec + 1e-9 * ts.tv_nsec;
}
