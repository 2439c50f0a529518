C     Vector helpers (another file of the tree).
      SUBROUTINE ADD2S(A, B, C, N)
      INTEGER N
      DOUBLE PRECISION A(1), B(1), C
      INTEGER I
      DO 10 I = 1, N
         A(I) = A(I) + C*B(I)
   10 CONTINUE
      END

      SUBROUTINE SHOUT(X)
      DOUBLE PRECISION X
      WRITE(*,*) 'X = ', X
      END
