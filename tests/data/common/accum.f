*     accum.f -- a kernel that WRITES its COMMON block (port-fortran test data).
*     /ACCC/ starts with an INTEGER before DOUBLE PRECISION members, so gfortran
*     pads 4 bytes after NCALL (-falign-commons, its default).
      SUBROUTINE ACCUM(N, X, Y)
      INTEGER N
      DOUBLE PRECISION X(N), Y(N)
      INTEGER NCALL
      DOUBLE PRECISION TOTAL, SCALE, HIST(4)
      COMMON /ACCC/ NCALL, TOTAL, SCALE, HIST
      INTEGER I, K
      NCALL = NCALL + 1
      DO 10 I = 1, N
         Y(I) = SCALE*X(I)
         TOTAL = TOTAL + X(I)
   10 CONTINUE
      DO 20 K = 1, 4
         HIST(K) = HIST(K) + K*SCALE
   20 CONTINUE
      RETURN
      END
