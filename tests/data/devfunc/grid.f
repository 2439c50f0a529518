C     Device functions for callees in loops: a helper subroutine called per grid
C     point with an array-element argument (the F77 idiom: U(1,I,J,K) passed to
C     a dummy DTEMP(5)), and a helper returning a scalar through an argument.
      SUBROUTINE EXACT(XI, ETA, ZETA, DTEMP)
      DOUBLE PRECISION XI, ETA, ZETA, DTEMP(5)
      DOUBLE PRECISION CE(3)
      INTEGER M
      CE(1) = 1.5D0
      CE(2) = -0.25D0
      CE(3) = 2.0D0
      DO 10 M = 1, 5
         DTEMP(M) = CE(1) + DBLE(M)*XI + CE(2)*ETA*ETA
     &            + CE(3)*ZETA*DBLE(M-3)
   10 CONTINUE
      END

      SUBROUTINE SETBV(NX, NY, NZ, U)
      INTEGER NX, NY, NZ
      DOUBLE PRECISION U(5, NX, NY, NZ)
      INTEGER I, J, K
      DOUBLE PRECISION XI, ETA, ZETA
      DO 30 K = 1, NZ
         DO 20 J = 1, NY
            DO 10 I = 1, NX
               XI = DBLE(I-1) / DBLE(NX)
               ETA = DBLE(J-1) / DBLE(NY)
               ZETA = DBLE(K-1) / DBLE(NZ)
               CALL EXACT(XI, ETA, ZETA, U(1,I,J,K))
   10       CONTINUE
   20    CONTINUE
   30 CONTINUE
      END

      SUBROUTINE PRESS(Q, GAMMA, P)
      DOUBLE PRECISION Q(5), GAMMA, P
      DOUBLE PRECISION RHOINV
      RHOINV = 1.0D0 / Q(1)
      P = (GAMMA - 1.0D0) * (Q(5) - 0.5D0*RHOINV*(Q(2)**2 + Q(3)**2
     &    + Q(4)**2))
      END

      SUBROUTINE PFIELD(N, U, GAMMA, PR, PMAX)
      INTEGER N
      DOUBLE PRECISION U(5, N), GAMMA, PR(N), PMAX
      INTEGER I
      DOUBLE PRECISION P
      PMAX = 0.0D0
      DO 10 I = 1, N
         CALL PRESS(U(1,I), GAMMA, P)
         PR(I) = P
         PMAX = MAX(PMAX, P)
   10 CONTINUE
      END
