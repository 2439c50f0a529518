*     reduce.f -- reductions over a vector.
*     Written for port-fortran.
*     Legacy features: IMPLICIT DOUBLE PRECISION (A-H,O-Z) so reals are
*     untyped DOUBLE PRECISION and I, N, IDMAXL are INTEGER by the
*     implicit rule; DIMENSION statements; min/max written as logical
*     IFs rather than intrinsics; location of the maximum kept by hand;
*     two sums in one loop.
*
      SUBROUTINE DMNMX(N, X, XMIN, XMAX)
*     Smallest and largest element of X(1:N); both zero when N < 1.
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      DIMENSION X(N)
      XMIN = 0.0D0
      XMAX = 0.0D0
      IF (N .LT. 1) RETURN
      XMIN = X(1)
      XMAX = X(1)
      DO 10 I = 2, N
         IF (X(I) .LT. XMIN) XMIN = X(I)
         IF (X(I) .GT. XMAX) XMAX = X(I)
   10 CONTINUE
      RETURN
      END
*
      INTEGER FUNCTION IDMAXL(N, X)
*     Index of the first largest element of X(1:N) (0 when N < 1).
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      DIMENSION X(*)
      IDMAXL = 0
      IF (N .LT. 1) RETURN
      IDMAXL = 1
      XMAX = X(1)
      DO 10 I = 2, N
         IF (X(I) .GT. XMAX) THEN
            IDMAXL = I
            XMAX = X(I)
         END IF
   10 CONTINUE
      RETURN
      END
*
      SUBROUTINE DMVAR(N, X, XMEAN, XVAR)
*     Mean and (population) variance of X(1:N) from the sum and the
*     sum of squares, accumulated in one loop.  Both zero when N < 1.
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      DIMENSION X(N)
      XMEAN = 0.0D0
      XVAR = 0.0D0
      IF (N .LT. 1) RETURN
      S1 = 0.0D0
      S2 = 0.0D0
      DO 10 I = 1, N
         S1 = S1 + X(I)
         S2 = S2 + X(I)*X(I)
   10 CONTINUE
      XMEAN = S1/DBLE(N)
      XVAR = S2/DBLE(N) - XMEAN*XMEAN
      RETURN
      END
