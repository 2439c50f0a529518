*     scans.f -- prefix sums for the parallel_scan translation.
*     Written for port-fortran's tests.
      SUBROUTINE SCANT(N, X, S, TOT)
*     running scalar through a temporary, the total kept after the loop
      INTEGER N, I
      DOUBLE PRECISION X(N), S(N), T, W, TOT
      T = TOT
      DO 10 I = 1, N
         W = 2.0D0 * X(I)
         T = T + W
         S(I) = T * 0.5D0
   10 CONTINUE
      TOT = T
      END
*
      SUBROUTINE SCANA(N, X, S)
*     the running sum through the array: S(I) = S(I-1) + X(I)
      INTEGER N, I
      DOUBLE PRECISION X(N), S(0:N)
      DO 10 I = 1, N
         S(I) = S(I-1) + X(I)
   10 CONTINUE
      END
*
      SUBROUTINE SCANIP(N, K)
*     in place, integers, a column of a matrix
      INTEGER N, I, J
      INTEGER K(N, 3)
      J = 2
      DO 10 I = 2, N
         K(I, J) = K(I, J) + K(I-1, J)
   10 CONTINUE
      END
*
      SUBROUTINE SCANX(N, X, S)
*     exclusive use (S(I) set before T moves): kept serial
      INTEGER N, I
      DOUBLE PRECISION X(N), S(N), T
      T = 0.0D0
      DO 10 I = 1, N
         S(I) = T
         T = T + X(I)
   10 CONTINUE
      END
*
      SUBROUTINE SCANP(N, X, S)
*     a running product: not a sum, kept serial
      INTEGER N, I
      DOUBLE PRECISION X(N), S(N), T
      T = 1.0D0
      DO 10 I = 1, N
         T = T * X(I)
         S(I) = T
   10 CONTINUE
      END
*
      SUBROUTINE SCAN2(N, X, S)
*     a second dependence besides the running sum: kept serial
      INTEGER N, I
      DOUBLE PRECISION X(N), S(N), T
      T = 0.0D0
      DO 10 I = 2, N
         T = T + X(I)
         S(I) = T + S(I-1)
   10 CONTINUE
      END
*
      SUBROUTINE SCANI(N, X, K)
*     an integer sum of real terms truncates at every step: kept serial
      INTEGER N, I, K(N), M
      DOUBLE PRECISION X(N)
      M = 0
      DO 10 I = 1, N
         M = M + X(I)
         K(I) = M
   10 CONTINUE
      END
*
      SUBROUTINE SCANB(NX, DX, XB, YB)
*     cell boundaries, each one place on from the one before:
*     XB(I+1) = XB(I) + DX (a running sum stored at I+1); YB a
*     distance-two recurrence, kept serial
      INTEGER NX, I
      DOUBLE PRECISION DX, XB(NX+1), YB(NX+2)
      DO 10 I = 1, NX
         XB(I+1) = XB(I) + DX
   10 CONTINUE
      DO 20 I = 1, NX
         YB(I+2) = YB(I) + DX
   20 CONTINUE
      END
