C     A helper subroutine called per grid point with an array-element argument:
C     the F77 idiom of passing U(1,I,J,K) to a dummy DTEMP(5), the helper with a
C     small local array. The nest becomes one MDRange kernel calling EXACT as a
C     device function.
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
