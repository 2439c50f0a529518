*     Features: forward GOTOs (early RETURN, IF/ELSE made of GOTOs, GOTO
*     to the end of a labelled DO), an arithmetic IF with a backward GOTO
*     loop, a call to a function of the same file (inlined), a DO with
*     a step, integer powers and mixed-kind arithmetic, a DO with a
*     variable step whose variable is read after the loop (Fortran's
*     value: start + trips*step), a three-way arithmetic IF (FFTPACK's
*     IF (IDO-2) 107,105,102) with a RETURN between its targets, an
*     IF / ELSE IF chain made of GOTOs to the statement after it (FFTPACK's
*     CFFTB1 dispatch).
      DOUBLE PRECISION FUNCTION FPOLY(X, C0, C1)
      DOUBLE PRECISION X, C0, C1
      FPOLY = C0 + C1*X + X**3
      RETURN
      END
*
      SUBROUTINE CTRL(N, X, Y, MODE, NSTEPS)
      INTEGER N, MODE, NSTEPS
      DOUBLE PRECISION X(N), Y(N)
      DOUBLE PRECISION FPOLY
      INTEGER I, IT
      IF (N .LE. 0) RETURN
      IF (MODE .EQ. 1) GO TO 20
      DO 10 I = 1, N
         Y(I) = FPOLY(X(I), 1.0D0, 0.5D0)
   10 CONTINUE
      GO TO 40
   20 CONTINUE
      DO 30 I = 1, N
         IF (X(I) .LT. 0.0D0) GO TO 30
         Y(I) = SQRT(X(I)) + DBLE(MOD(I, 4))**2
   30 CONTINUE
   40 CONTINUE
      DO 50 I = 2, N, 3
         Y(I) = Y(I) * 0.5 + FLOAT(I / 2)
   50 CONTINUE
      DO 55 I = 1, N, MAX(1, NSTEPS)
         Y(I) = Y(I) + 2.0D0
   55 CONTINUE
      Y(1) = Y(1) + DBLE(I)
      IT = 0
   60 IF (IT - NSTEPS) 70, 80, 80
   70 IT = IT + 1
      Y(1) = Y(1) + 1.0D0 / DBLE(IT)
      GO TO 60
   80 CONTINUE
      IF (MODE .NE. 4) GO TO 83
      Y(1) = Y(1) + 4.0D0
      GO TO 89
   83 IF (MODE .NE. 2) GO TO 86
      IF (NSTEPS .GT. 5) GO TO 84
      Y(N) = Y(N) - 1.0D0
      GO TO 85
   84 Y(N) = Y(N) + 1.0D0
   85 CONTINUE
      GO TO 89
   86 Y(1) = -Y(1)
   89 CONTINUE
      IF (NSTEPS - 2) 97, 95, 92
   92 Y(N) = Y(N) + 3.0D0
      IF (MOD(NSTEPS, 2) .EQ. 1) RETURN
   95 Y(N) = Y(N) * 2.0D0
   97 CONTINUE
      RETURN
      END
