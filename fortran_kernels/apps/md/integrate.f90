! integrate.f90 -- md velocity Verlet: half kick, drift (wrapped into the box), half kick.
subroutine kick(n, vx, vy, vz, fx, fy, fz, h)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: vx(n), vy(n), vz(n)
  double precision, intent(in) :: fx(n), fy(n), fz(n), h
  integer :: i
  do i = 1, n
    vx(i) = vx(i) + h * fx(i)
    vy(i) = vy(i) + h * fy(i)
    vz(i) = vz(i) + h * fz(i)
  end do
end subroutine kick

subroutine drift(n, x, y, z, vx, vy, vz, dt, box)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: x(n), y(n), z(n)
  double precision, intent(in) :: vx(n), vy(n), vz(n), dt, box
  integer :: i
  do i = 1, n
    x(i) = modulo(x(i) + dt * vx(i), box)
    y(i) = modulo(y(i) + dt * vy(i), box)
    z(i) = modulo(z(i) + dt * vz(i), box)
  end do
end subroutine drift
