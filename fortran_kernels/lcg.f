*     lcg.f -- linear congruential random numbers (sequential state).
*     Written for port-fortran.
*     Legacy features: INTEGER*8, PARAMETER constants, a loop made of a
*     label, an arithmetic IF and a backward GOTO (no DO at all); each
*     value depends on the previous state, so it must stay serial.
*
      SUBROUTINE RANLCG(N, ISEED, X)
*     Minimal-standard multiplicative generator
*        K := MOD(16807*K, 2**31 - 1),   X(I) := K/(2**31 - 1)
*     The product is formed in INTEGER*8 (no overflow).  Any ISEED is
*     accepted: it is reduced into [1, 2**31 - 2] first.  On return
*     ISEED holds the new state.
      INTEGER N, ISEED
      DOUBLE PRECISION X(N)
      INTEGER*8 IA, IM, K
      PARAMETER (IA = 16807, IM = 2147483647)
      INTEGER I
      K = MOD(ABS(INT(ISEED, 8)), IM)
      IF (K .EQ. 0) K = 1
      I = 0
   10 IF (I - N) 20, 30, 30
   20 I = I + 1
      K = MOD(IA*K, IM)
      X(I) = DBLE(K)/DBLE(IM)
      GOTO 10
   30 ISEED = INT(K)
      RETURN
      END
