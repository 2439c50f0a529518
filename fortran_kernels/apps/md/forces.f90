! forces.f90 -- md pair forces (Lennard-Jones, cut off at rc, minimum image), all pairs:
! each particle sums its own force; the potential energy is a reduction.
subroutine forces(n, x, y, z, fx, fy, fz, box, rc, epot)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), y(n), z(n), box, rc
  double precision, intent(out) :: fx(n), fy(n), fz(n), epot
  integer :: i, j
  double precision :: dx, dy, dz, r2, r6i, f, ax, ay, az, e, ecut
  ecut = 4.0d0 * (rc**(-12) - rc**(-6))  ! the potential is shifted to vanish at rc
  e = 0.0d0
  do i = 1, n
    ax = 0.0d0
    ay = 0.0d0
    az = 0.0d0
    do j = 1, n
      if (j /= i) then
        dx = x(i) - x(j)
        dy = y(i) - y(j)
        dz = z(i) - z(j)
        dx = dx - box * anint(dx / box)
        dy = dy - box * anint(dy / box)
        dz = dz - box * anint(dz / box)
        r2 = dx * dx + dy * dy + dz * dz
        if (r2 < rc * rc) then
          r6i = 1.0d0 / (r2 * r2 * r2)
          f = 48.0d0 * r6i * (r6i - 0.5d0) / r2
          ax = ax + f * dx
          ay = ay + f * dy
          az = az + f * dz
          e = e + 2.0d0 * r6i * (r6i - 1.0d0) - 0.5d0 * ecut
        end if
      end if
    end do
    fx(i) = ax
    fy(i) = ay
    fz(i) = az
  end do
  epot = e
end subroutine forces
