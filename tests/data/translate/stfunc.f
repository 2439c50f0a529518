C     Statement functions, as F77 codes use them: the magnitude of a
C     complex element (|re| + |im|), a polynomial of the loop index, one
C     statement function's value as another's argument, an integer value
C     converted to the function's REAL*8 type, a dummy named like the loop
C     variable.
      SUBROUTINE CMAXAB(N, ZX, S, D)
      INTEGER N
      DOUBLE COMPLEX ZX(*)
      DOUBLE PRECISION S(*), D(*)
      DOUBLE COMPLEX ZDUM
      DOUBLE PRECISION CABS1, P2, SQ, T
      INTEGER I
      CABS1(ZDUM) = ABS(DBLE(ZDUM)) + ABS(DIMAG(ZDUM))
      P2(T) = 1.5D0*T*T - 0.5D0
      SQ(I) = I*I
      DO 10 I = 1, N
         S(I) = CABS1(ZX(I)) + P2(D(I) + 1.0D0)*SQ(I + 1)
         D(I) = P2(CABS1(ZX(I)*ZX(I)))
   10 CONTINUE
      RETURN
      END
C     A statement function used in a sum: the reduction over the loop.
      DOUBLE PRECISION FUNCTION WNORM(N, X, W)
      INTEGER N, I
      DOUBLE PRECISION X(N), W(N), WSQ, A, B
      WSQ(A, B) = B*A*A
      WNORM = 0.0D0
      DO 20 I = 1, N
         WNORM = WNORM + WSQ(X(I), W(I))
   20 CONTINUE
      RETURN
      END
