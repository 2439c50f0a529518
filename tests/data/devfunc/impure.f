C     Callees that cannot run on the device: I/O, COMMON.
      SUBROUTINE LOGIT(N, X)
      INTEGER N
      DOUBLE PRECISION X(N)
      INTEGER I
      DO 10 I = 1, N
         X(I) = 2.0D0*X(I)
         CALL SHOUT(X(I))
   10 CONTINUE
      END

      DOUBLE PRECISION FUNCTION SCALED(V)
      DOUBLE PRECISION V, FAC
      COMMON /CFAC/ FAC
      SCALED = FAC*V
      END

      SUBROUTINE USEFAC(N, X)
      INTEGER N
      DOUBLE PRECISION X(N), SCALED
      INTEGER I
      DO 10 I = 1, N
         X(I) = SCALED(X(I))
   10 CONTINUE
      END
