C     Helpers of another file of the tree.
      SUBROUTINE ADD2S(A, B, C, N)
      INTEGER N
      DOUBLE PRECISION A(1), B(1), C
      INTEGER I
      DO 10 I = 1, N
         A(I) = A(I) + C*B(I)
   10 CONTINUE
      END

      SUBROUTINE PRESS(Q, GAMMA, P)
      DOUBLE PRECISION Q(5), GAMMA, P
      DOUBLE PRECISION RHOINV
      RHOINV = 1.0D0 / (1.0D0 + Q(1)*Q(1))
      P = (GAMMA - 0.5D0) * (Q(5) - 0.5D0*RHOINV*(Q(2)**2 + Q(3)**2
     &    + Q(4)**2))
      END

      DOUBLE PRECISION FUNCTION HORNER(X, C)
      DOUBLE PRECISION X, C(3)
      IF (X .GT. 0.75D0) THEN
         HORNER = C(1)
         RETURN
      END IF
      HORNER = C(1) + X*(C(2) + X*C(3))
      END

      DOUBLE PRECISION FUNCTION WEIGHT(X, W)
      DOUBLE PRECISION X, W(3), HORNER
      WEIGHT = 0.5D0 * HORNER(X, W)
      END

      SUBROUTINE SHOUT(X)
      DOUBLE PRECISION X
      WRITE(*,*) 'X = ', X
      END

      DOUBLE PRECISION FUNCTION SCALED(V)
      DOUBLE PRECISION V, FAC
      COMMON /CFAC/ FAC
      SCALED = FAC*V
      END
