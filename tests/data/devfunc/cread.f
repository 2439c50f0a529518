C     NPB's idiom: EXACT reads the coefficients CE of COMMON /CONSTS/ (set once by the
C     program); INIT calls it at every grid point. EXACT only reads the block, so it is a
C     device function taking CE as an extra argument that INIT passes from its own
C     declaration of the block; the nest is one parallel kernel. INITIO also writes a
C     line: a hybrid port whose outlined nest gets CE as an argument. BADINI declares the
C     block differently and SETCE writes CE in the loop: those loops stay serial.
      SUBROUTINE EXACTC(XI, ETA, DTEMP)
      DOUBLE PRECISION XI, ETA, DTEMP(5)
      DOUBLE PRECISION CE(5, 3), SCALE
      COMMON /CONSTS/ CE, SCALE
      INTEGER M
      DO 10 M = 1, 5
         DTEMP(M) = CE(M, 1) + CE(M, 2)*XI + CE(M, 3)*ETA*ETA
   10 CONTINUE
      END

      SUBROUTINE INIT(NX, NY, U)
      INTEGER NX, NY
      DOUBLE PRECISION U(5, NX, NY)
      DOUBLE PRECISION CE(5, 3), SCALE
      COMMON /CONSTS/ CE, SCALE
      INTEGER I, J
      DOUBLE PRECISION XI, ETA
      DO 20 J = 1, NY
         DO 10 I = 1, NX
            XI = DBLE(I-1) / DBLE(NX)
            ETA = DBLE(J-1) / DBLE(NY)
            CALL EXACTC(XI, ETA, U(1, I, J))
   10    CONTINUE
   20 CONTINUE
      END

      SUBROUTINE BADINI(NX, U)
      INTEGER NX
      DOUBLE PRECISION U(5, NX)
      DOUBLE PRECISION C(15), S
      COMMON /CONSTS/ C, S
      INTEGER I
      DO 10 I = 1, NX
         CALL EXACTC(DBLE(I), 0.5D0, U(1, I))
   10 CONTINUE
      END

      SUBROUTINE SETCE(NX, U)
      INTEGER NX
      DOUBLE PRECISION U(5, NX)
      DOUBLE PRECISION CE(5, 3), SCALE
      COMMON /CONSTS/ CE, SCALE
      INTEGER I
      DO 10 I = 1, NX
         CE(1, 1) = DBLE(I)
         CALL EXACTC(DBLE(I), 0.5D0, U(1, I))
   10 CONTINUE
      END

      SUBROUTINE INITIO(NX, NY, U)
      INTEGER NX, NY
      DOUBLE PRECISION U(5, NX, NY)
      DOUBLE PRECISION CE(5, 3), SCALE
      COMMON /CONSTS/ CE, SCALE
      INTEGER I, J
      DOUBLE PRECISION XI, ETA
      DO 20 J = 1, NY
         DO 10 I = 1, NX
            XI = DBLE(I-1) / DBLE(NX)
            ETA = DBLE(J-1) / DBLE(NY)
            CALL EXACTC(XI, ETA, U(1, I, J))
   10    CONTINUE
   20 CONTINUE
      WRITE(*, *) 'INITIO', NX, NY
      END
