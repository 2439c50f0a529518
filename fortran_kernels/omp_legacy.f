*     omp_legacy.f -- a fixed-form routine that already carries OpenMP.
*     Written for port-fortran.
*     Legacy features: the C$OMP sentinel in column 1, a MAX reduction
*     clause, INTRINSIC ABS/MAX; compiles with or without -fopenmp.
*
      DOUBLE PRECISION FUNCTION DAMAX(N, X)
*     Largest absolute value in X(1:N) (zero when N < 1).
      INTEGER N
      DOUBLE PRECISION X(N)
      DOUBLE PRECISION AMAX
      INTEGER I
      INTRINSIC ABS, MAX
      AMAX = 0.0D0
C$OMP PARALLEL DO PRIVATE(I) REDUCTION(MAX:AMAX)
      DO 10 I = 1, N
         AMAX = MAX(AMAX, ABS(X(I)))
   10 CONTINUE
C$OMP END PARALLEL DO
      DAMAX = AMAX
      RETURN
      END
