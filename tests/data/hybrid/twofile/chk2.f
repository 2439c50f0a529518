*     chk2.f -- an argument check calling an error routine defined in
*     another file (xerr2.f), then a parallel loop; written for
*     port-fortran's tests of hybrid ports across files.
      SUBROUTINE CHK2(N, ALPHA, X, INFO)
      INTEGER N, INFO, I
      DOUBLE PRECISION ALPHA, X(N)
      INFO = 0
      IF (N .LT. 1) THEN
         INFO = 1
         CALL XERR2('CHK2  ', INFO)
         RETURN
      END IF
      DO 10 I = 1, N
         X(I) = ALPHA*X(I) + 1.0D0
   10 CONTINUE
      END
