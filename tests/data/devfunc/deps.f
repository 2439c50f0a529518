C     Dependence verdicts with calls (asserted on the IR, not built).
      SUBROUTINE FILL5(V, T)
      DOUBLE PRECISION V(5), T
      INTEGER M
      DO 10 M = 1, 5
         V(M) = T*DBLE(M)
   10 CONTINUE
      END

      SUBROUTINE FILLM(V, M, T)
      INTEGER M
      DOUBLE PRECISION V(*), T
      INTEGER L
      DO 10 L = 1, M
         V(L) = T
   10 CONTINUE
      END

      SUBROUTINE MID3(X, T)
      DOUBLE PRECISION X(*), T
      CALL FILLM(X(3), 3, T)
      END

      DOUBLE PRECISION FUNCTION TOTAL(N, X)
      INTEGER N, I
      DOUBLE PRECISION X(N)
      TOTAL = 0.0D0
      DO 10 I = 1, N
         TOTAL = TOTAL + X(I)
   10 CONTINUE
      END

      SUBROUTINE BLOCKS(N, U, V)
      INTEGER N, I
      DOUBLE PRECISION U(5*N), V(N+4)
C     disjoint blocks of five: parallel
      DO 10 I = 1, N
         CALL FILL5(U(5*I-4), DBLE(I))
   10 CONTINUE
C     overlapping windows of five: not parallel
      DO 20 I = 1, N
         CALL FILL5(V(I), DBLE(I))
   20 CONTINUE
      END

      SUBROUTINE COLS(N, M, NX, NY, NZ, A, G, R)
      INTEGER N, M, NX, NY, NZ, J, K
      DOUBLE PRECISION A(N, M), G(NX, NY, NZ), R(M)
      DOUBLE PRECISION TOTAL
C     a column of N entries: fits the first dimension, parallel
      DO 10 J = 1, M
         CALL FILLM(A(1,J), N, 1.0D0)
   10 CONTINUE
C     K entries from A(1,J): may spill into the next columns, not parallel
      DO 20 J = 1, M
         CALL FILLM(A(1,J), K, 1.0D0)
   20 CONTINUE
C     a slab G(:,:,K) of NX*NY entries: parallel
      DO 30 K = 1, NZ
         CALL FILLM(G(1,1,K), NX*NY, 2.0D0)
   30 CONTINUE
C     a function reading a whole column in a loop writing elsewhere: parallel
      DO 40 J = 1, M
         R(J) = TOTAL(N, A(1,J))
   40 CONTINUE
C     the whole array written by every iteration: not parallel
      DO 50 J = 1, M
         CALL FILLM(A, N*M, DBLE(J))
   50 CONTINUE
      END

      SUBROUTINE TRANS(N, X, Y)
      INTEGER N, I
      DOUBLE PRECISION X(*), Y(N)
C     MID3 fills X(3:5) of the block passed: X(5*I-4+2 : 5*I-4+4), disjoint
      DO 10 I = 1, N
         CALL MID3(X(5*I-4), Y(I))
   10 CONTINUE
      END

      SUBROUTINE LEG(Y)
      DOUBLE PRECISION Y(1)
C     the legacy Y(1) dummy passed on as an element: FILL5 touches Y(1:5)
      CALL FILL5(Y(1), 1.0D0)
      END
