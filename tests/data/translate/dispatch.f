*     FACTR: trial division written the way F77 setup routines are, a
*     search loop entered at three labels (a divisor from the table, the
*     next odd divisor, the same divisor again after a factor is found).
*     No IF or DO rewrite covers these jumps: the rules run them as a
*     dispatch loop over numbered blocks, and the scaling loop after
*     them stays a parallel loop of its own.
      SUBROUTINE FACTR (N, NF, KF, M, W)
      INTEGER N, NF, KF(32), M
      DOUBLE PRECISION W(M)
      INTEGER IDIV(3), K, L, ID, IQ, IR, I
      DATA IDIV /2, 3, 5/
      NF = 0
      IF (N .LE. 1) RETURN
      L = N
      K = 0
   10 K = K + 1
      IF (K - 3) 20, 20, 30
   20 ID = IDIV(K)
      GO TO 40
   30 ID = ID + 2
   40 IQ = L / ID
      IR = L - ID*IQ
      IF (IR) 10, 45, 10
   45 NF = NF + 1
      KF(NF) = ID
      L = IQ
      IF (L .NE. 1) GO TO 40
      DO 60 I = 1, M
         W(I) = W(I)*DBLE(KF(NF)) + DBLE(NF)
   60 CONTINUE
      RETURN
      END
