C     blanks.f -- CHARACTER constants, written for port-fortran's tests.
C     Legacy features: a CHARACTER*1 constant set by SAVE and DATA (never assigned), a
C     CHARACTER*1 PARAMETER, a CHARACTER*5 PARAMETER compared with a dummy string, an
C     array of CHARACTER*1 filled and scanned.
      SUBROUTINE BLANKS(A, N, S, K)
      CHARACTER*1 A(1)
      CHARACTER*(*) S
      INTEGER N, K, I
      CHARACTER*1 BLNK, STAR
      CHARACTER*5 WORD
      PARAMETER (STAR = '*', WORD = 'Ab+ 9')
      SAVE BLNK
      DATA BLNK /' '/
      DO 10 I = 1, N
         IF (A(I) .EQ. STAR) K = K + 1
         A(I) = BLNK
   10 CONTINUE
      IF (S .EQ. WORD) K = -1
      IF (S(1:2) .LT. WORD) K = K + 100
      END
