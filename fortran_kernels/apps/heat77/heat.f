*     heat.f -- heat77: explicit 2-D heat conduction on a plate, the
*     left edge held at TLEFT, the other edges insulated.  Written for
*     port-fortran as a legacy F77 application: fixed form, COMMON
*     blocks through an INCLUDE file, a time loop calling routines of
*     other files, output every NOUT steps, a self-check at the end.
*
*     Input (heat.in): NX NY NSTEP NOUT / ALPHA TLEFT
      PROGRAM HEAT
      INCLUDE 'heat.inc'
      INTEGER NSTEP, NOUT, ISTEP, J, IC
      DOUBLE PRECISION TMAX, TMIN, T0MAX, T0MIN, CLINE, HFINAL, HTOTAL
      INTEGER C0, C1, CRATE
      EXTERNAL HTOTAL
      OPEN(10, FILE='heat.in', STATUS='OLD')
      READ(10,*) NX, NY, NSTEP, NOUT
      READ(10,*) ALPHA, TLEFT
      CLOSE(10)
      IF (NX .GT. NXM .OR. NY .GT. NYM) THEN
         WRITE(*,*) 'GRID TOO LARGE: ', NX, NY, ' MAXIMUM ', NXM, NYM
         STOP 2
      END IF
      WRITE(*,'(A,I5,A,I5,A,I7,A,F8.4)') ' HEAT77 GRID', NX, ' X', NY,
     $     '  STEPS', NSTEP, '  ALPHA', ALPHA
      CALL SYSTEM_CLOCK(C0, CRATE)
      CALL INIT
      CALL BNDRY
      CALL HMAX(T0MAX, T0MIN)
      T0MAX = MAX(T0MAX, TLEFT)
      T0MIN = MIN(T0MIN, TLEFT)
      DO 100 ISTEP = 1, NSTEP
         CALL SWEEP
         CALL SWAP
         CALL BNDRY
         IF (MOD(ISTEP, NOUT) .EQ. 0) CALL REPORT(ISTEP)
  100 CONTINUE
*     the temperature along the centre line (a reduction kept here)
      IC = NX/2
      CLINE = 0.0D0
      DO 110 J = 1, NY
         CLINE = CLINE + U(IC,J)
  110 CONTINUE
      CLINE = CLINE / NY
      CALL HMAX(TMAX, TMIN)
      HFINAL = HTOTAL()
      CALL SYSTEM_CLOCK(C1)
      WRITE(*,'(A,1PE16.8)') ' CENTRE LINE MEAN', CLINE
      WRITE(*,'(A,1PE16.8)') ' FINAL HEAT      ', HFINAL
      CALL DUMP
*     self-check: the maximum principle (no new extremes appear)
      IF (TMAX .LE. T0MAX + 1.0D-12 .AND. TMIN .GE. T0MIN - 1.0D-12
     $    .AND. CLINE .GT. 0.0D0) THEN
         WRITE(*,'(A)') ' SELF-CHECK PASSED: maximum principle holds'
      ELSE
         WRITE(*,'(A)') ' SELF-CHECK FAILED: maximum principle violated'
      END IF
      WRITE(*,'(A,F10.3)') ' TIME (S)', DBLE(C1 - C0) / DBLE(CRATE)
      END
