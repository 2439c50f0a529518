! nbody.f90 -- direct O(n**2) gravitational accelerations.
! Written for port-fortran.
! Free-form external subroutine (no module) with declared intents,
! real(8), sqrt in the inner loop, a softening term so that coincident
! particles (including i == j) give a finite, zero contribution.
subroutine nbody_forces(n, eps, x, y, z, m, ax, ay, az)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: eps                 ! softening length
  real(8), intent(in) :: x(n), y(n), z(n), m(n)
  real(8), intent(out) :: ax(n), ay(n), az(n)
  real(8), parameter :: soft0 = 1.0d-2      ! floor on the softening**2
  real(8) :: dx, dy, dz, r2, rinv3, sx, sy, sz, soft2
  integer :: i, j

  soft2 = eps * eps + soft0
  do i = 1, n
    sx = 0.0d0
    sy = 0.0d0
    sz = 0.0d0
    do j = 1, n
      dx = x(j) - x(i)
      dy = y(j) - y(i)
      dz = z(j) - z(i)
      r2 = dx * dx + dy * dy + dz * dz + soft2
      rinv3 = m(j) / (r2 * sqrt(r2))
      sx = sx + dx * rinv3
      sy = sy + dy * rinv3
      sz = sz + dz * rinv3
    end do
    ax(i) = sx
    ay(i) = sy
    az(i) = sz
  end do
end subroutine nbody_forces
