*     io.f -- heat77 output: the temperature along the middle row.
      SUBROUTINE DUMP
      INCLUDE 'heat.inc'
      INTEGER I, JC
      JC = NY/2
      OPEN(11, FILE='heat.dat', STATUS='UNKNOWN')
      WRITE(11,'(A,I6)') '# TEMPERATURE ALONG ROW', JC
      DO 10 I = 0, NX + 1, MAX(1, NX/16)
         WRITE(11,'(I6,1PE16.8)') I, U(I,JC)
   10 CONTINUE
      CLOSE(11)
      RETURN
      END
