C     chutil.f -- fixed-form F77 string routines, written for port-fortran's tests.
C     Legacy features: CHARACTER*(*) dummies, CHARACTER*8 dummy, LEN, INDEX,
C     a trailing-blank scan backwards, blank padding on assignment.
      SUBROUTINE LTRIM8(S, NAME, L, K)
      CHARACTER*(*) S
      CHARACTER*8 NAME
      INTEGER L, K, I
      L = 0
      DO 10 I = LEN(S), 1, -1
         IF (L .EQ. 0 .AND. S(I:I) .NE. ' ') L = I
   10 CONTINUE
      NAME = S
      K = INDEX(S, 'a')
      IF (NAME(1:1) .GE. 'a') K = -K
      END
