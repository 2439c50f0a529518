*     versions.f -- loops whose iterations are independent only for some
*     values of the scalar arguments; the port runs each in parallel
*     when a test where the loop starts says so, serially otherwise.
*     Written for port-fortran's tests.
*
*     VAXPY: a BLAS-style strided update with running indices. With
*     INCY = 0 every iteration updates Y(1); negative strides start from
*     the far end.
      SUBROUTINE VAXPY(N, DA, X, INCX, Y, INCY)
      INTEGER N, INCX, INCY
      DOUBLE PRECISION DA, X(*), Y(*)
      INTEGER I, IX, IY
      IF (N .LE. 0) RETURN
      IX = 1
      IY = 1
      IF (INCX .LT. 0) IX = (-N+1)*INCX + 1
      IF (INCY .LT. 0) IY = (-N+1)*INCY + 1
      DO 10 I = 1, N
         Y(IY) = Y(IY) + DA*X(IX)
         IX = IX + INCX
         IY = IY + INCY
   10 CONTINUE
      RETURN
      END
*
*     VSYM: a coefficient K that may be zero (A(1) accumulates), an
*     offset KOFF that may be zero, small (a recurrence) or past the
*     trip count, flattened 2-D arrays: D with N rows (columns never
*     overlap), E with LDA rows (they overlap when LDA < M).
      SUBROUTINE VSYM(N, M, K, KOFF, LDA, A, B, C, D, E)
      INTEGER N, M, K, KOFF, LDA
      DOUBLE PRECISION A(*), B(*), C(*), D(*), E(*)
      INTEGER I, J
      DO 10 I = 1, N
         A(1 + (I-1)*K) = A(1 + (I-1)*K) + B(I)
   10 CONTINUE
      DO 20 I = 1, N
         C(I + KOFF) = 0.5D0*C(I) + B(I)
   20 CONTINUE
      DO 40 J = 1, M
         DO 30 I = 1, N
            D(I + (J-1)*N) = D(I + (J-1)*N)*B(I) + J
   30    CONTINUE
   40 CONTINUE
      DO 60 J = 1, N
         DO 50 I = 1, M
            E(I + (J-1)*LDA) = 2.0D0*E(I + (J-1)*LDA) + B(J)
   50    CONTINUE
   60 CONTINUE
      RETURN
      END
