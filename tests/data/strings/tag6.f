C     tag6.f -- an F77 CHARACTER*6 function, written for port-fortran's tests.
C     Legacy features: a typed FUNCTION statement of a fixed-length string, a
C     CHARACTER*(*) dummy, LEN_TRIM, blank padding of the result.
      CHARACTER*6 FUNCTION TAG6(NAME, K)
      CHARACTER*(*) NAME
      INTEGER K, L
      L = LEN_TRIM(NAME)
      TAG6 = NAME
      IF (L .LT. 6 .AND. K .GT. 0) TAG6(L+1:L+1) = '*'
      END
