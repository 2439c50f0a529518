*     sweep.f -- heat77 time step: UN from U (five-point Laplacian),
*     then U from UN.
      SUBROUTINE SWEEP
      INCLUDE 'heat.inc'
      INTEGER I, J
      DO 20 J = 1, NY
         DO 10 I = 1, NX
            UN(I,J) = U(I,J) + ALPHA*(U(I-1,J) + U(I+1,J)
     $              + U(I,J-1) + U(I,J+1) - 4.0D0*U(I,J))
   10    CONTINUE
   20 CONTINUE
      RETURN
      END
*
      SUBROUTINE SWAP
      INCLUDE 'heat.inc'
      INTEGER I, J
      DO 20 J = 1, NY
         DO 10 I = 1, NX
            U(I,J) = UN(I,J)
   10    CONTINUE
   20 CONTINUE
      RETURN
      END
