C     Calls to helpers of another file (lib/physics.f): an element E of
C     A(NQ, NEL) passed as A(1,E) to a routine sweeping NQ entries (Nekbone
C     style); a helper returning a scalar through its argument; a function of
C     a whole array called in a reduction.
      SUBROUTINE FIELDS(NQ, NEL, A, B, U, GAMMA, W, PR, PMAX, S)
      INTEGER NQ, NEL
      DOUBLE PRECISION A(NQ, NEL), B(NQ, NEL), U(5, NEL), GAMMA, W(3)
      DOUBLE PRECISION PR(NEL), PMAX, S
      DOUBLE PRECISION P, WEIGHT
      INTEGER E
      DO 10 E = 1, NEL
         CALL ADD2S(A(1,E), B(1,E), GAMMA, NQ)
   10 CONTINUE
      DO 20 E = 1, NEL
         CALL PRESS(U(1,E), GAMMA, P)
         PR(E) = P
         PMAX = MAX(PMAX, P)
         S = S + WEIGHT(P, W)
   20 CONTINUE
      END
