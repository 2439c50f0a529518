*     diag.f -- heat77 diagnostics: total heat, extremes, the report.
      DOUBLE PRECISION FUNCTION HTOTAL()
      INCLUDE 'heat.inc'
      INTEGER I, J
      DOUBLE PRECISION S
      S = 0.0D0
      DO 20 J = 1, NY
         DO 10 I = 1, NX
            S = S + U(I,J)
   10    CONTINUE
   20 CONTINUE
      HTOTAL = S / (NX*NY)
      RETURN
      END
*
      SUBROUTINE HMAX(TMAX, TMIN)
      INCLUDE 'heat.inc'
      DOUBLE PRECISION TMAX, TMIN
      INTEGER I, J
      TMAX = U(1,1)
      TMIN = U(1,1)
      DO 20 J = 1, NY
         DO 10 I = 1, NX
            TMAX = MAX(TMAX, U(I,J))
            TMIN = MIN(TMIN, U(I,J))
   10    CONTINUE
   20 CONTINUE
      RETURN
      END
*
      SUBROUTINE REPORT(ISTEP)
      INCLUDE 'heat.inc'
      INTEGER ISTEP
      DOUBLE PRECISION TMAX, TMIN, HTOTAL
      EXTERNAL HTOTAL
      CALL HMAX(TMAX, TMIN)
      WRITE(*,'(A,I7,A,1PE16.8,A,1PE16.8,A,1PE16.8)') ' STEP', ISTEP,
     $     '  HEAT', HTOTAL(), '  TMAX', TMAX, '  TMIN', TMIN
      RETURN
      END
