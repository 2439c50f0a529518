*     tridiag.f -- implicit diffusion step by the Thomas algorithm.
*     Written for port-fortran.
*     Legacy features: INCLUDE 'params.inc', caller-supplied workspace
*     CP(N), forward elimination and back substitution as first-order
*     recurrences (each iteration needs the previous one: must stay
*     serial), a DO loop with a negative step.
*
      SUBROUTINE TRIDIF(N, R, D, X, CP)
*     Solves  -S*X(I-1) + (1+2S)*X(I) - S*X(I+1) = D(I),  I = 1..N,
*     with X(0) = X(N+1) = 0 and S = ABS(R).  The matrix is strictly
*     diagonally dominant for every R, so no pivot is ever zero.
      INCLUDE 'params.inc'
      INTEGER N
      DOUBLE PRECISION R, D(N), X(N), CP(N)
      DOUBLE PRECISION OFFD, DIAG, DEN
      INTEGER I
      IF (N .LT. 1) RETURN
      OFFD = -ABS(R)
      DIAG = ONE + TWO*ABS(R)
      CP(1) = OFFD/DIAG
      X(1) = D(1)/DIAG
      DO 10 I = 2, N
         DEN = DIAG - OFFD*CP(I-1)
         CP(I) = OFFD/DEN
         X(I) = (D(I) - OFFD*X(I-1))/DEN
   10 CONTINUE
      DO 20 I = N - 1, 1, -1
         X(I) = X(I) - CP(I)*X(I+1)
   20 CONTINUE
      RETURN
      END
