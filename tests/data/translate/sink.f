C     sink.f -- column loops whose rows are updated by loops over them
C     (fortran/sink.py). Written for port-fortran's tests.
      SUBROUTINE MMCOL(M, N, K, ALPHA, BETA, A, LDA, B, LDB, C, LDC)
C     C := ALPHA*A*B + BETA*C a column at a time: the column scaled,
C     then one column update per term.
      INTEGER M, N, K, LDA, LDB, LDC
      DOUBLE PRECISION ALPHA, BETA
      DOUBLE PRECISION A(LDA,*), B(LDB,*), C(LDC,*)
      DOUBLE PRECISION TEMP
      INTEGER I, J, L
      DO 90 J = 1, N
         IF (BETA .EQ. 0.0D0) THEN
            DO 50 I = 1, M
               C(I,J) = 0.0D0
   50       CONTINUE
         ELSE IF (BETA .NE. 1.0D0) THEN
            DO 60 I = 1, M
               C(I,J) = BETA*C(I,J)
   60       CONTINUE
         END IF
         DO 80 L = 1, K
            TEMP = ALPHA*B(L,J)
            DO 70 I = 1, M
               C(I,J) = C(I,J) + TEMP*A(I,L)
   70       CONTINUE
   80    CONTINUE
   90 CONTINUE
      RETURN
      END

      SUBROUTINE UPTRI(N, K, A, LDA, C, LDC)
C     upper triangle of C := C + A*A**T, column J rows 1..J
      INTEGER N, K, LDA, LDC
      DOUBLE PRECISION A(LDA,*), C(LDC,*)
      DOUBLE PRECISION T
      INTEGER I, J, L
      DO 30 J = 1, N
         DO 20 L = 1, K
            T = A(J,L)
            DO 10 I = 1, J
               C(I,J) = C(I,J) + T*A(I,L)
   10       CONTINUE
   20    CONTINUE
   30 CONTINUE
      END

      SUBROUTINE DIFCOL(M, N, U, W, V)
C     the second loop over I reads W(I+1,J), which the first writes:
C     its rows are not independent, the column loop stays as it is
      INTEGER M, N
      DOUBLE PRECISION U(M+1,N), W(M+1,N), V(M,N)
      INTEGER I, J
      DO 30 J = 1, N
         DO 10 I = 1, M + 1
            W(I,J) = 2.0D0*U(I,J)
   10    CONTINUE
         DO 20 I = 1, M
            V(I,J) = W(I+1,J) - W(I,J)
   20    CONTINUE
   30 CONTINUE
      END

      SUBROUTINE NRMCOL(M, N, X, Y)
C     the scale read between the loops is what the first loop wrote
      INTEGER M, N
      DOUBLE PRECISION X(M,N), Y(M,N), S
      INTEGER I, J
      DO 30 J = 1, N
         DO 10 I = 1, M
            Y(I,J) = X(I,J)*X(I,J)
   10    CONTINUE
         S = Y(1,J) + 1.0D0
         DO 20 I = 1, M
            Y(I,J) = Y(I,J)/S
   20    CONTINUE
   30 CONTINUE
      END

      SUBROUTINE MMCOLZ(M, N, K, A, LDA, B, LDB, C, LDC)
C     C := C + A*B a column at a time, terms with a zero B(L,J) skipped
      INTEGER M, N, K, LDA, LDB, LDC
      DOUBLE PRECISION A(LDA,*), B(LDB,*), C(LDC,*)
      DOUBLE PRECISION TEMP
      INTEGER I, J, L
      DO 30 J = 1, N
         DO 20 L = 1, K
            IF (B(L,J) .NE. 0.0D0) THEN
               TEMP = B(L,J)
               DO 10 I = 1, M
                  C(I,J) = C(I,J) + TEMP*A(I,L)
   10          CONTINUE
            END IF
   20    CONTINUE
   30 CONTINUE
      END
