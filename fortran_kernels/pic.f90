! pic.f90 -- particle-in-cell gather (grid -> particles) and scatter
! (particles -> grid) with linear (cloud-in-cell) weights on a periodic
! 1-D grid of ng cells, nodes 0..ng.
! Written for port-fortran.
! Positions xp are in cell units. Any real xp is accepted: it is wrapped
! into [0, ng) with modulo, the cell index comes from floor and is
! clamped to ng-1 (guards the rounding case modulo(x, ng) == ng).
! ng must be >= 1.
module pic_mod
  implicit none
  private
  integer, parameter :: dp = kind(1.0d0)
  public :: pic_gather, pic_scatter

contains

  ! ep(p) := field eg interpolated at particle p.
  subroutine pic_gather(np, ng, xp, eg, ep)
    integer, intent(in) :: np, ng
    real(dp), intent(in) :: xp(np), eg(0:ng)
    real(dp), intent(out) :: ep(np)
    real(dp) :: s, w
    integer :: p, ic

    do p = 1, np
      s = modulo(xp(p), real(ng, dp))
      ic = min(floor(s), ng - 1)
      w = s - real(ic, dp)
      ep(p) = (1.0_dp - w) * eg(ic) + w * eg(ic + 1)
    end do
  end subroutine pic_gather

  ! Deposit charge q of every particle on the two nodes of its cell,
  ! adding to rho; then fold the periodic image node ng onto node 0.
  subroutine pic_scatter(np, ng, q, xp, rho)
    integer, intent(in) :: np, ng
    real(dp), intent(in) :: q, xp(np)
    real(dp), intent(inout) :: rho(0:ng)
    real(dp) :: s, w
    integer :: p, ic

    do p = 1, np
      s = modulo(xp(p), real(ng, dp))
      ic = min(floor(s), ng - 1)
      w = s - real(ic, dp)
      rho(ic) = rho(ic) + q * (1.0_dp - w)
      rho(ic + 1) = rho(ic + 1) + q * w
    end do
    rho(0) = rho(0) + rho(ng)
    rho(ng) = rho(0)
  end subroutine pic_scatter

end module pic_mod
