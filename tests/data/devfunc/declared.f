C     A callee that declares a COMMON block it never touches (Nekbone's MXM includes
C     SIZE and TOTAL, every block of the code): no shared state, so the callee is a
C     device function and the loop calling it stays parallel.
      SUBROUTINE USEDBL(N, X)
      INTEGER N
      DOUBLE PRECISION X(N)
      INTEGER I
      DO 10 I = 1, N
         CALL DBLIT(X(I))
   10 CONTINUE
      END

      SUBROUTINE DBLIT(V)
      DOUBLE PRECISION V, FAC, OTHER
      COMMON /CFAC/ FAC
      COMMON /COTHER/ OTHER(10)
      V = 2.0D0*V
      END
