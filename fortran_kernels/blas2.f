*     blas2.f -- matrix-vector product with a transpose flag.
*     Written for port-fortran.
*     Legacy features: CHARACTER*1 flag TRANS ('N'/'n' or anything else
*     meaning transposed), leading dimension LDA with A(LDA,*) assumed
*     size, column-oriented update (outer J loop carries Y), dot form
*     for the transposed case, nested labelled DO loops.
*
      SUBROUTINE DGEMV(TRANS, M, N, ALPHA, A, LDA, X, BETA, Y)
*     TRANS = 'N':  Y(1:M) := ALPHA*A*X(1:N) + BETA*Y(1:M)
*     otherwise:    Y(1:N) := ALPHA*A**T*X(1:M) + BETA*Y(1:N)
*     A is M by N stored in A(LDA,*), LDA >= M.
      CHARACTER*1 TRANS
      INTEGER M, N, LDA
      DOUBLE PRECISION ALPHA, BETA
      DOUBLE PRECISION A(LDA,*), X(*), Y(*)
      DOUBLE PRECISION TEMP
      INTEGER I, J, LENY
      LOGICAL NOTRAN
      IF (M .LE. 0 .OR. N .LE. 0) RETURN
      NOTRAN = TRANS .EQ. 'N' .OR. TRANS .EQ. 'n'
      IF (NOTRAN) THEN
         LENY = M
      ELSE
         LENY = N
      END IF
*     Y := BETA*Y
      DO 10 I = 1, LENY
         Y(I) = BETA*Y(I)
   10 CONTINUE
      IF (NOTRAN) THEN
*        Y := ALPHA*A*X + Y, one column at a time
         DO 30 J = 1, N
            TEMP = ALPHA*X(J)
            DO 20 I = 1, M
               Y(I) = Y(I) + TEMP*A(I,J)
   20       CONTINUE
   30    CONTINUE
      ELSE
*        Y := ALPHA*A**T*X + Y, one dot product per column
         DO 50 J = 1, N
            TEMP = 0.0D0
            DO 40 I = 1, M
               TEMP = TEMP + A(I,J)*X(I)
   40       CONTINUE
            Y(J) = Y(J) + ALPHA*TEMP
   50    CONTINUE
      END IF
      RETURN
      END
