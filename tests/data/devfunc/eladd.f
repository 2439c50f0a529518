C     Calls to helpers of another file (lib/vecops.f), Nekbone style: the
C     element E of A(NXYZ, NEL) passed as A(1,E) to a routine sweeping N entries.
      SUBROUTINE ELADD(NXYZ, NEL, A, B, C)
      INTEGER NXYZ, NEL
      DOUBLE PRECISION A(NXYZ, NEL), B(NXYZ, NEL), C
      INTEGER E
      DO 10 E = 1, NEL
         CALL ADD2S(A(1,E), B(1,E), C, NXYZ)
   10 CONTINUE
      END
