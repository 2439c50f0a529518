*     prefix.f -- inclusive prefix sum.
*     Written for port-fortran.
*     Legacy features: a running scalar whose intermediate values are
*     stored (a scan, not a reduction: a prefix sum, parallel_scan in
*     Kokkos), implicit typing of the loop index.
*
      SUBROUTINE PSUM(N, X, S)
*     S(I) := X(1) + ... + X(I)
      INTEGER N
      DOUBLE PRECISION X(N), S(N)
      DOUBLE PRECISION T
      T = 0.0D0
      DO 10 I = 1, N
         T = T + X(I)
         S(I) = T
   10 CONTINUE
      RETURN
      END
