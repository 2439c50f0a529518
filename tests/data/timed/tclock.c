/* a wall clock for tmatmul.F90 (written for port-fortran's tests) */
#include <sys/time.h>
void tclock_(double *t) { struct timeval tv; gettimeofday(&tv, 0); *t = tv.tv_sec + 1e-6 * tv.tv_usec; }
