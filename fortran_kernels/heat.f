*     heat.f -- explicit (forward Euler, central space) heat equation.
*     Written for port-fortran.
*     Legacy features: INCLUDE 'params.inc' (PARAMETER constants, found
*     through -I include), physical constants in COMMON /HEATC/ (set
*     by the caller: ALPHA diffusivity, DT time step, RDX2 = 1/DX**2),
*     halo bounds U(0:N+1), labelled DO loops.
*     Stability needs ALPHA*DT*RDX2 <= 1/2 (1-D) or 1/4 (2-D); the
*     kernels themselves compute finite values for any inputs.
*
      SUBROUTINE HEAT1D(N, U, UNEW)
*     One step on a rod with fixed end values U(0), U(N+1).
      INCLUDE 'params.inc'
      INTEGER N
      DOUBLE PRECISION U(0:N+1), UNEW(0:N+1)
      DOUBLE PRECISION ALPHA, DT, RDX2
      COMMON /HEATC/ ALPHA, DT, RDX2
      DOUBLE PRECISION R
      INTEGER I
      R = ALPHA*DT*RDX2
      UNEW(0) = U(0)
      UNEW(N+1) = U(N+1)
      DO 10 I = 1, N
         UNEW(I) = U(I) + R*(U(I-1) - TWO*U(I) + U(I+1))
   10 CONTINUE
      RETURN
      END
*
      SUBROUTINE HEAT2D(NX, NY, U, DU)
*     Increment DU = DT*ALPHA*laplacian(U) on the interior of a plate;
*     U carries a one-cell halo, DU covers the interior only.
      INCLUDE 'params.inc'
      INTEGER NX, NY
      DOUBLE PRECISION U(0:NX+1,0:NY+1), DU(NX,NY)
      DOUBLE PRECISION ALPHA, DT, RDX2
      COMMON /HEATC/ ALPHA, DT, RDX2
      DOUBLE PRECISION R
      INTEGER I, J
      R = ALPHA*DT*RDX2
      DO 20 J = 1, NY
         DO 10 I = 1, NX
            DU(I,J) = R*(U(I-1,J) + U(I+1,J) + U(I,J-1) + U(I,J+1)
     $                   - FOUR*U(I,J))
   10    CONTINUE
   20 CONTINUE
      RETURN
      END
