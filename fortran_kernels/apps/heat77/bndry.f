*     bndry.f -- heat77 boundary conditions: left edge held at TLEFT,
*     the other three insulated (the halo copies the edge cell).
      SUBROUTINE BNDRY
      INCLUDE 'heat.inc'
      INTEGER I, J
      DO 10 J = 1, NY
         U(0,J) = TLEFT
         U(NX+1,J) = U(NX,J)
   10 CONTINUE
      DO 20 I = 0, NX + 1
         U(I,0) = U(I,1)
         U(I,NY+1) = U(I,NY)
   20 CONTINUE
      RETURN
      END
