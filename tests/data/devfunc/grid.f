C     A helper subroutine called per grid point with an array-element argument:
C     the F77 idiom of passing U(1,I,J,K) to a dummy DTEMP(5), the helper with a
C     small local array; JAC fills a 2x2 block with lower bounds 0 and may
C     RETURN early. The nest becomes one MDRange kernel calling both as device
C     functions.
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

      SUBROUTINE JAC(XI, ETA, G)
      DOUBLE PRECISION XI, ETA, G(0:1, 0:1)
      INTEGER P, Q
      DO 20 Q = 0, 1
         DO 10 P = 0, 1
            G(P, Q) = DBLE(P + 2*Q + 1)*XI - DBLE(P - Q)*ETA
   10    CONTINUE
   20 CONTINUE
      IF (XI .GT. 0.5D0) RETURN
      G(1, 1) = -G(1, 1)
      END

      SUBROUTINE SETBV(NX, NY, NZ, U, V)
      INTEGER NX, NY, NZ
      DOUBLE PRECISION U(5, NX, NY, NZ), V(0:1, 0:1, NX, NY, NZ)
      INTEGER I, J, K
      DOUBLE PRECISION XI, ETA, ZETA
      DO 30 K = 1, NZ
         DO 20 J = 1, NY
            DO 10 I = 1, NX
               XI = DBLE(I-1) / DBLE(NX)
               ETA = DBLE(J-1) / DBLE(NY)
               ZETA = DBLE(K-1) / DBLE(NZ)
               CALL EXACT(XI, ETA, ZETA, U(1,I,J,K))
               CALL JAC(XI, ETA, V(0,0,I,J,K))
   10       CONTINUE
   20    CONTINUE
   30 CONTINUE
      END
