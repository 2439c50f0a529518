*     init.f -- heat77 initial state: a cold plate with a hot square.
      SUBROUTINE INIT
      INCLUDE 'heat.inc'
      INTEGER I, J
      DO 20 J = 0, NY + 1
         DO 10 I = 0, NX + 1
            U(I,J) = 0.0D0
            IF (I .GT. NX/4 .AND. I .LE. NX/2 .AND.
     $          J .GT. NY/4 .AND. J .LE. NY/2) U(I,J) = 1.0D0
            UN(I,J) = U(I,J)
   10    CONTINUE
   20 CONTINUE
      RETURN
      END
*
*     A smoother nobody calls any more (kept in the build for history).
      SUBROUTINE SMOOTH
      INCLUDE 'heat.inc'
      INTEGER I, J
      DO 20 J = 1, NY
         DO 10 I = 1, NX
            UN(I,J) = 0.5D0*U(I,J) + 0.125D0*(U(I-1,J) + U(I+1,J)
     $              + U(I,J-1) + U(I,J+1))
   10    CONTINUE
   20 CONTINUE
      RETURN
      END
