C     sblas1.f -- single-precision vector kernels, old-style.
C     Written for port-fortran.
C     Legacy features: no declarations at all beyond DIMENSION, so
C     everything is typed by the implicit rule (I-N INTEGER, otherwise
C     REAL): N, INCX, INCY, I, IX, IY, KX, KY are INTEGER; SA, SX, SY,
C     STEMP and the function SDOT are REAL (4 bytes).  The unit-stride
C     fast path is reached by a forward GOTO.
C
      SUBROUTINE SAXPY(N, SA, SX, INCX, SY, INCY)
C     SY := SA*SX + SY
      DIMENSION SX(*), SY(*)
      IF (N .LE. 0) RETURN
      IF (INCX .EQ. 1 .AND. INCY .EQ. 1) GOTO 20
      IX = 1
      IY = 1
      IF (INCX .LT. 0) IX = (-N+1)*INCX + 1
      IF (INCY .LT. 0) IY = (-N+1)*INCY + 1
      DO 10 I = 1, N
         SY(IY) = SY(IY) + SA*SX(IX)
         IX = IX + INCX
         IY = IY + INCY
   10 CONTINUE
      RETURN
C     unit stride
   20 DO 30 I = 1, N
         SY(I) = SY(I) + SA*SX(I)
   30 CONTINUE
      RETURN
      END
C
      FUNCTION SDOT(N, SX, INCX, SY, INCY)
C     SDOT := sum of SX(i)*SY(i), accumulated in REAL. The strided
C     element is addressed directly from I (no running index).
      DIMENSION SX(*), SY(*)
      STEMP = 0.0
      KX = 1
      KY = 1
      IF (INCX .LT. 0) KX = 1 - (N-1)*INCX
      IF (INCY .LT. 0) KY = 1 - (N-1)*INCY
      DO 10 I = 1, N
         STEMP = STEMP + SX(KX + (I-1)*INCX)*SY(KY + (I-1)*INCY)
   10 CONTINUE
      SDOT = STEMP
      RETURN
      END
