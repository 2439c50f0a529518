*     relax_io.f -- 1-D Jacobi relaxation that reports its progress.
*     Written for port-fortran.
*     Legacy features: formatted WRITE to unit 6 inside the iteration
*     loop (no device code can do this: a full port is refused; the
*     routine stays Fortran and its two inner loops become kernels),
*     FORMAT, GOTO out of the loop, implicit typing of the counters.
*
      SUBROUTINE RELAXP(N, NITER, TOL, U, UNEW)
      INTEGER N, NITER
      DOUBLE PRECISION TOL, U(0:N+1), UNEW(0:N+1)
      DOUBLE PRECISION DIFF
      DO 30 IT = 1, NITER
         DIFF = 0.0D0
         DO 10 I = 1, N
            UNEW(I) = 0.5D0*(U(I-1) + U(I+1))
            DIFF = MAX(DIFF, ABS(UNEW(I) - U(I)))
   10    CONTINUE
         DO 20 I = 1, N
            U(I) = UNEW(I)
   20    CONTINUE
         WRITE (6, 100) IT, DIFF
         IF (DIFF .LT. TOL) GOTO 40
   30 CONTINUE
   40 RETURN
  100 FORMAT (' RELAXP: ITERATION ', I6, '  MAX CHANGE ', 1PE12.4)
      END
