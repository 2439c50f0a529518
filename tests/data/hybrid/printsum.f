*     printsum.f -- a routine whose only result is what it prints.
*     Written for port-fortran. Fixed form, F77.
*
      SUBROUTINE PSUM(N, A, B)
*     Sums two arrays (a parallel reduction the hybrid port outlines)
*     and reports the sums against the expected total; it changes none
*     of its arguments: the printed line is its result.
      INTEGER N
      DOUBLE PRECISION A(N), B(N)
      DOUBLE PRECISION SA, SB, T0, T1
      INTEGER I
      CALL CPU_TIME(T0)
      SA = 0.0D0
      SB = 0.0D0
      DO 10 I = 1, N
         SA = SA + A(I)
         SB = SB + 2.0D0*B(I)
   10 CONTINUE
      CALL CPU_TIME(T1)
      IF (ABS(SA - SB) .GT. 1.0D-6*ABS(SA)) THEN
         WRITE (*, 100) N, SA, SB
      ELSE
         WRITE (*, 110) N
      END IF
      WRITE (*, 120) T1 - T0
  100 FORMAT (' PSUM: N =', I8, '  SUM A =', 1PE24.16, '  2 SUM B =',
     &        1PE24.16)
  110 FORMAT (' PSUM: N =', I8, '  SUMS AGREE')
  120 FORMAT (' PSUM: TIME ', F12.9)
      END
