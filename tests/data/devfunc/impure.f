C     Callees that cannot run on the device (lib/physics.f): one writes a line
C     (I/O), one reads a COMMON block. Their loops stay serial, the reason naming
C     the callee and the line.
      SUBROUTINE LOGIT(N, X)
      INTEGER N
      DOUBLE PRECISION X(N)
      INTEGER I
      DO 10 I = 1, N
         X(I) = 2.0D0*X(I)
         CALL SHOUT(X(I))
   10 CONTINUE
      END

      SUBROUTINE USEFAC(N, X)
      INTEGER N
      DOUBLE PRECISION X(N), SCALED
      INTEGER I
      DO 10 I = 1, N
         X(I) = SCALED(X(I))
   10 CONTINUE
      END
