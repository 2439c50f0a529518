*     transpose.f -- out-of-place matrix transpose.
*     Written for port-fortran.
*     Legacy features: leading dimensions, A(LDA,*) and B(LDB,*)
*     assumed size, two labelled DO loops sharing one CONTINUE label.
*
      SUBROUTINE DTRANS(M, N, A, LDA, B, LDB)
*     B(1:N,1:M) := transpose of A(1:M,1:N); LDA >= M, LDB >= N.
      INTEGER M, N, LDA, LDB
      DOUBLE PRECISION A(LDA,*), B(LDB,*)
      INTEGER I, J
      DO 10 J = 1, N
      DO 10 I = 1, M
         B(J,I) = A(I,J)
   10 CONTINUE
      RETURN
      END
