C     chary.f -- CHARACTER arrays, written for port-fortran's tests.
C     Legacy features: CHARACTER*1 arrays declared A(1) (assumed size through the F77
C     idiom), a copy loop with a label, CHARACTER*1 comparison, a reversal.
      SUBROUTINE CHREV(A, B, N, NB)
      CHARACTER*1 A(1), B(1)
      INTEGER N, NB, I
      NB = 0
      DO 10 I = 1, N
         A(I) = B(N - I + 1)
         IF (B(I) .EQ. ' ') NB = NB + 1
   10 CONTINUE
      RETURN
      END
