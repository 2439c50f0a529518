/* Sizes and types of lkern.F90, in the way C benchmark suites write their headers:
   C comments, a default dataset chosen by #if !defined(...). Written for port-fortran. */
#if !defined(SMALL_SET) && !defined(LARGE_SET)
# define SMALL_SET
#endif
#ifdef SMALL_SET
# define NX 40
# define NY 30
#endif
#define REAL_T double precision
#define _PB_NX nx
