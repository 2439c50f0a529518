*     polyev.f -- evaluate one polynomial at many points (Horner).
*     Written for port-fortran.
*     Legacy features: the coefficient table and the degree live in
*     COMMON /POLYC/ COEF(0:MAXDEG), NDEG (filled by the caller), its
*     size comes from PARAMETER MAXDEG in INCLUDE 'params.inc'; a COMMON
*     integer bounds the inner loop (clamped to the table); the inner
*     Horner loop is a recurrence, the outer loop over points is not.
*
      SUBROUTINE POLYEV(N, X, P)
*     P(I) := COEF(0) + COEF(1)*X(I) + ... + COEF(NDEG)*X(I)**NDEG
      INCLUDE 'params.inc'
      INTEGER N
      DOUBLE PRECISION X(N), P(N)
      INTEGER NDEG
      DOUBLE PRECISION COEF(0:MAXDEG)
      COMMON /POLYC/ COEF, NDEG
      DOUBLE PRECISION T
      INTEGER I, K, ND
      ND = MIN(MAX(NDEG, 0), MAXDEG)
      DO 20 I = 1, N
         T = COEF(ND)
         DO 10 K = ND - 1, 0, -1
            T = T*X(I) + COEF(K)
   10    CONTINUE
         P(I) = T
   20 CONTINUE
      RETURN
      END
