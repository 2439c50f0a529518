C     namsrt.f -- arrays of CHARACTER*N strings, written for port-fortran's tests.
C     Legacy features: CHARACTER*6 arrays (TEMP declared (1): F77 assumed size), a gather through
C     an index array into a work array, the copy back, a comparison of elements with a
C     literal and with each other, a local CHARACTER*6 array; B of extent N (the gather
C     reads it through IND, whose values the harness keeps within 1..N).
      SUBROUTINE NAMSRT(B, IND, N, TEMP, NEQ)
      INTEGER IND(1), N, NEQ, I, JJ
      CHARACTER*6 B(N), TEMP(1)
      CHARACTER*6 LOC(4)
      NEQ = 0
      DO 20 I = 1, N
         JJ = IND(I)
         TEMP(I) = B(JJ)
   20 CONTINUE
      DO 30 I = 1, N
   30 B(I) = TEMP(I)
      DO 40 I = 1, 4
   40 LOC(I) = 'ab'
      DO 50 I = 2, N
         IF (B(I) .LT. B(I-1)) NEQ = NEQ + 1
         IF (B(I) .EQ. LOC(1)) NEQ = NEQ + 100
   50 CONTINUE
      END
