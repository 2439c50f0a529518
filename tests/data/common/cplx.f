*     cplx.f -- COMPLEX members of a COMMON block (port-fortran test data).
*     gfortran aligns a COMPLEX to the size of one part: after the INTEGER
*     NCALL, ZS (COMPLEX*16) sits at offset 8, not 16; W (COMPLEX*8) after
*     the INTEGER K at offset 28.
      SUBROUTINE CROT(N, X)
      INTEGER N
      COMPLEX*16 X(N)
      INTEGER NCALL, K
      COMPLEX*16 ZS, ZH(3)
      COMPLEX W
      COMMON /CPLXC/ NCALL, ZS, K, W, ZH
      INTEGER I
      NCALL = NCALL + 1
      DO 10 I = 1, N
         X(I) = ZS*X(I) + DCMPLX(DBLE(REAL(W)), DBLE(AIMAG(W)))
   10 CONTINUE
      DO 20 I = 1, 3
         ZH(I) = ZH(I)*ZS + K
   20 CONTINUE
      ZS = ZS*(0.0D0, 1.0D0)
      RETURN
      END
