*     blas1.f -- level-1 vector kernels in the reference-BLAS style.
*     Written for port-fortran (not copied from any BLAS).
*     Legacy features: fixed form, DOUBLE PRECISION, INCX/INCY strides
*     (negative strides start from the far end), assumed-size X(*),
*     labelled DO loops ending on CONTINUE, a unit-stride fast path,
*     a loop unrolled by 5 with a MOD clean-up loop, a DO with a step.
*
      SUBROUTINE DAXPY(N, DA, DX, INCX, DY, INCY)
*     DY := DA*DX + DY
      INTEGER N, INCX, INCY
      DOUBLE PRECISION DA
      DOUBLE PRECISION DX(*), DY(*)
      INTEGER I, IX, IY
      IF (N .LE. 0) RETURN
      IF (INCX .EQ. 1 .AND. INCY .EQ. 1) THEN
         DO 10 I = 1, N
            DY(I) = DY(I) + DA*DX(I)
   10    CONTINUE
      ELSE
         IX = 1
         IY = 1
         IF (INCX .LT. 0) IX = (-N+1)*INCX + 1
         IF (INCY .LT. 0) IY = (-N+1)*INCY + 1
         DO 20 I = 1, N
            DY(IY) = DY(IY) + DA*DX(IX)
            IX = IX + INCX
            IY = IY + INCY
   20    CONTINUE
      END IF
      RETURN
      END
*
      DOUBLE PRECISION FUNCTION DDOT(N, DX, INCX, DY, INCY)
*     DDOT := sum of DX(i)*DY(i). Unit stride is unrolled by 5.
      INTEGER N, INCX, INCY
      DOUBLE PRECISION DX(*), DY(*)
      DOUBLE PRECISION DTEMP
      INTEGER I, IX, IY, M
      DTEMP = 0.0D0
      DDOT = 0.0D0
      IF (N .LE. 0) RETURN
      IF (INCX .EQ. 1 .AND. INCY .EQ. 1) THEN
         M = MOD(N, 5)
         DO 10 I = 1, M
            DTEMP = DTEMP + DX(I)*DY(I)
   10    CONTINUE
         DO 20 I = M + 1, N, 5
            DTEMP = DTEMP + DX(I)*DY(I) + DX(I+1)*DY(I+1) +
     $              DX(I+2)*DY(I+2) + DX(I+3)*DY(I+3) +
     $              DX(I+4)*DY(I+4)
   20    CONTINUE
      ELSE
         IX = 1
         IY = 1
         IF (INCX .LT. 0) IX = (-N+1)*INCX + 1
         IF (INCY .LT. 0) IY = (-N+1)*INCY + 1
         DO 30 I = 1, N
            DTEMP = DTEMP + DX(IX)*DY(IY)
            IX = IX + INCX
            IY = IY + INCY
   30    CONTINUE
      END IF
      DDOT = DTEMP
      RETURN
      END
*
      DOUBLE PRECISION FUNCTION DNRM2(N, DX, INCX)
*     Euclidean norm as the square root of a plain sum of squares.
*     INCX must be positive (otherwise the result is zero, as in BLAS).
      INTEGER N, INCX
      DOUBLE PRECISION DX(*)
      DOUBLE PRECISION SSQ
      INTEGER I
      SSQ = 0.0D0
      IF (N .GE. 1 .AND. INCX .GE. 1) THEN
         DO 10 I = 1, 1 + (N-1)*INCX, INCX
            SSQ = SSQ + DX(I)**2
   10    CONTINUE
      END IF
      DNRM2 = SQRT(SSQ)
      RETURN
      END
*
      SUBROUTINE DSCAL(N, DA, DX, INCX)
*     DX := DA*DX over N elements with stride INCX (> 0).
      INTEGER N, INCX
      DOUBLE PRECISION DA
      DOUBLE PRECISION DX(*)
      INTEGER I, NINCX
      IF (N .LE. 0 .OR. INCX .LE. 0) RETURN
      NINCX = N*INCX
      DO 10 I = 1, NINCX, INCX
         DX(I) = DA*DX(I)
   10 CONTINUE
      RETURN
      END
