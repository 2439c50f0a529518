*     blas3.f -- general matrix-matrix product with transpose flags.
*     Written for port-fortran.
*     Legacy features: two CHARACTER*1 flags, three leading dimensions
*     (LDA, LDB, LDC) with assumed-size A(LDA,*), B(LDB,*), C(LDC,*),
*     LOGICAL flags set from character comparisons, four loop nests
*     selected by IF/ELSE, continuation lines marked with '$'.
*
      SUBROUTINE DGEMM(TRANSA, TRANSB, M, N, K, ALPHA, A, LDA, B, LDB,
     $                 BETA, C, LDC)
*     C := ALPHA*op(A)*op(B) + BETA*C, op(X) = X or X**T.
*     op(A) is M by K, op(B) is K by N, C is M by N.
      CHARACTER*1 TRANSA, TRANSB
      INTEGER M, N, K, LDA, LDB, LDC
      DOUBLE PRECISION ALPHA, BETA
      DOUBLE PRECISION A(LDA,*), B(LDB,*), C(LDC,*)
      DOUBLE PRECISION TEMP
      INTEGER I, J, L
      LOGICAL NOTA, NOTB
      NOTA = TRANSA .EQ. 'N' .OR. TRANSA .EQ. 'n'
      NOTB = TRANSB .EQ. 'N' .OR. TRANSB .EQ. 'n'
      IF (M .LE. 0 .OR. N .LE. 0) RETURN
      IF (NOTB) THEN
         IF (NOTA) THEN
*           C := ALPHA*A*B + BETA*C
            DO 30 J = 1, N
               DO 20 I = 1, M
                  TEMP = 0.0D0
                  DO 10 L = 1, K
                     TEMP = TEMP + A(I,L)*B(L,J)
   10             CONTINUE
                  C(I,J) = ALPHA*TEMP + BETA*C(I,J)
   20          CONTINUE
   30       CONTINUE
         ELSE
*           C := ALPHA*A**T*B + BETA*C
            DO 60 J = 1, N
               DO 50 I = 1, M
                  TEMP = 0.0D0
                  DO 40 L = 1, K
                     TEMP = TEMP + A(L,I)*B(L,J)
   40             CONTINUE
                  C(I,J) = ALPHA*TEMP + BETA*C(I,J)
   50          CONTINUE
   60       CONTINUE
         END IF
      ELSE
         IF (NOTA) THEN
*           C := ALPHA*A*B**T + BETA*C
            DO 90 J = 1, N
               DO 80 I = 1, M
                  TEMP = 0.0D0
                  DO 70 L = 1, K
                     TEMP = TEMP + A(I,L)*B(J,L)
   70             CONTINUE
                  C(I,J) = ALPHA*TEMP + BETA*C(I,J)
   80          CONTINUE
   90       CONTINUE
         ELSE
*           C := ALPHA*A**T*B**T + BETA*C
            DO 120 J = 1, N
               DO 110 I = 1, M
                  TEMP = 0.0D0
                  DO 100 L = 1, K
                     TEMP = TEMP + A(L,I)*B(J,L)
  100             CONTINUE
                  C(I,J) = ALPHA*TEMP + BETA*C(I,J)
  110          CONTINUE
  120       CONTINUE
         END IF
      END IF
      RETURN
      END
