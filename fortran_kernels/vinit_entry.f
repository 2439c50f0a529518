*     vinit_entry.f -- vector initialisation with two entry points.
*     Written for port-fortran.
*     Legacy features: ENTRY (a second entry point VZERO with fewer
*     arguments sharing the body of VINIT), a GOTO over the ENTRY
*     statement; a full port is refused, a hybrid port keeps both.
*
      SUBROUTINE VINIT(N, X, V)
*     X(1:N) := V;  CALL VZERO(N, X) sets X(1:N) := 0.
      INTEGER N
      DOUBLE PRECISION X(N), V
      DOUBLE PRECISION C
      INTEGER I
      C = V
      GOTO 5
      ENTRY VZERO(N, X)
      C = 0.0D0
    5 DO 10 I = 1, N
         X(I) = C
   10 CONTINUE
      RETURN
      END
