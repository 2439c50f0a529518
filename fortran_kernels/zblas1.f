*     zblas1.f -- double-complex vector update.
*     Written for port-fortran.
*     Legacy features: COMPLEX*16 (non-standard star kind), INCX/INCY
*     strides with start offsets KX/KY, assumed-size arrays.
*
      SUBROUTINE ZAXPY(N, ZA, ZX, INCX, ZY, INCY)
*     ZY := ZA*ZX + ZY (complex multiply-add per element)
      INTEGER N, INCX, INCY
      COMPLEX*16 ZA
      COMPLEX*16 ZX(*), ZY(*)
      INTEGER I, KX, KY
      IF (N .LE. 0) RETURN
      KX = 1
      KY = 1
      IF (INCX .LT. 0) KX = 1 - (N-1)*INCX
      IF (INCY .LT. 0) KY = 1 - (N-1)*INCY
      DO 10 I = 1, N
         ZY(KY + (I-1)*INCY) = ZY(KY + (I-1)*INCY) +
     $                         ZA*ZX(KX + (I-1)*INCX)
   10 CONTINUE
      RETURN
      END
