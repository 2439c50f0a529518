*     legacy.f -- routines a full port refuses, for the hybrid tests.
*     Written for port-fortran. Fixed form, F77.
*
      SUBROUTINE TIMED(N, A, B, S, INFO)
*     An argument check calling an error routine, timer calls around
*     the loop nests, a diagnostic WRITE after them.
      INTEGER N, INFO
      DOUBLE PRECISION A(N), B(N), S
      REAL T0, T1
      INTEGER I
      INFO = 0
      IF (N .LT. 1) THEN
         INFO = 1
         CALL XERR('TIMED ', INFO)
         RETURN
      END IF
      CALL CPU_TIME(T0)
      DO 10 I = 1, N
         B(I) = 2.0D0*A(I) + 1.0D0
   10 CONTINUE
      S = 0.0D0
      DO 20 I = 1, N
         S = S + B(I)*A(I)
   20 CONTINUE
      CALL CPU_TIME(T1)
      WRITE (*, 100) N, S
  100 FORMAT (' TIMED: N =', I8, '  S =', 1PE14.6)
      END
*
      SUBROUTINE XERR(NAME, INFO)
*     The error handler: reports and returns.
      CHARACTER*(*) NAME
      INTEGER INFO
      WRITE (*, *) ' ** ', NAME, ': ILLEGAL ARGUMENT NUMBER', INFO
      END
*
      SUBROUTINE EQV2(N, X, Y)
*     Weights named through EQUIVALENCE: the first nest reads W only
*     (outlined), the second W and WL, which share storage (kept).
      INTEGER N
      DOUBLE PRECISION X(N), Y(N)
      DOUBLE PRECISION W(3), WL
      EQUIVALENCE (W(1), WL)
      INTEGER I
      W(1) = 0.25D0
      W(2) = 0.5D0
      W(3) = 0.25D0
      Y(1) = X(1)
      Y(N) = X(N)
      DO 10 I = 2, N - 1
         Y(I) = W(1)*X(I-1) + W(2)*X(I) + W(3)*X(I+1)
   10 CONTINUE
      DO 20 I = 1, N
         Y(I) = Y(I) + WL*W(2)*X(I)
   20 CONTINUE
      END
*
      SUBROUTINE ENTR(N, X, S, T)
*     A second entry point between two loops: ENTRB(N, X, T) runs the
*     second loop only.
      INTEGER N
      DOUBLE PRECISION X(N), S, T
      INTEGER I
      DO 10 I = 1, N
         X(I) = X(I)*S
   10 CONTINUE
      ENTRY ENTRB(N, X, T)
      DO 20 I = 1, N
         X(I) = X(I) + T
   20 CONTINUE
      END
*
      SUBROUTINE SHARED(N, M, A, B)
*     DO 10 J / DO 10 I end on one CONTINUE; only the inner loop is
*     parallel (its trip count depends on J, so the nest is not turned
*     inside out): it becomes a kernel, the label stays for the J loop.
      INTEGER N, M
      DOUBLE PRECISION A(N, M), B(N)
      INTEGER I, J
      DO 10 J = 2, M
      DO 10 I = 1, N - J + 2
         A(I, J) = A(I, J-1) + B(I)
   10 CONTINUE
      END
