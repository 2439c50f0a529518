*     histogram.f -- histograms: scattered updates through computed
*     or given bin numbers.
*     Written for port-fortran.
*     Legacy features: HISTI is typed entirely by the implicit rule
*     (IDX, IHIST, N, NBINS are INTEGER); HISTX uses
*     IMPLICIT DOUBLE PRECISION (A-H,O-Z) and INCLUDE 'params.inc'.
*     Both ADD to the counts already in IHIST (the caller clears it).
*
      SUBROUTINE HISTI(N, IDX, NBINS, IHIST)
*     IHIST(IDX(I)) += 1.  Requires 1 <= IDX(I) <= NBINS.
      DIMENSION IDX(N), IHIST(NBINS)
      DO 10 I = 1, N
         IHIST(IDX(I)) = IHIST(IDX(I)) + 1
   10 CONTINUE
      RETURN
      END
*
      SUBROUTINE HISTX(N, X, NBINS, IHIST)
*     Counts of X(1:N) in NBINS equal bins over [-1, 1]; values below
*     or above the range land in the first or last bin (clamped in
*     real arithmetic before INT, so any finite X is safe).
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      INCLUDE 'params.inc'
      DIMENSION X(N), IHIST(NBINS)
      INTEGER IHIST
      IF (NBINS .LT. 1) RETURN
      BINS = DBLE(NBINS)
      DO 10 I = 1, N
         T = (X(I) + ONE)*HALF*BINS
         T = MIN(MAX(T, ZERO), BINS - ONE)
         IB = INT(T) + 1
         IHIST(IB) = IHIST(IB) + 1
   10 CONTINUE
      RETURN
      END
