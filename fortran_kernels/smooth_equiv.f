*     smooth_equiv.f -- 3-point smoothing with weights named through
*     EQUIVALENCE.
*     Written for port-fortran.
*     Legacy features: EQUIVALENCE makes the scalars WL, WC, WR aliases
*     of the elements of W(3): storage association a full port refuses;
*     the routine stays Fortran and its loop, touching W only, moves.
*
      SUBROUTINE SMOOTH3(N, X, Y)
*     Y(I) := (X(I-1) + 2*X(I) + X(I+1))/4 inside, ends copied.
      INTEGER N
      DOUBLE PRECISION X(N), Y(N)
      DOUBLE PRECISION W(3), WL, WC, WR
      EQUIVALENCE (W(1), WL), (W(2), WC), (W(3), WR)
      INTEGER I
      IF (N .LT. 1) RETURN
      WL = 0.25D0
      WC = 0.5D0
      WR = 0.25D0
      Y(1) = X(1)
      Y(N) = X(N)
      DO 10 I = 2, N - 1
         Y(I) = W(1)*X(I-1) + W(2)*X(I) + W(3)*X(I+1)
   10 CONTINUE
      RETURN
      END
