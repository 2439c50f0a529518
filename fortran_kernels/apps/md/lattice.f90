! lattice.f90 -- md initial state: a simple cubic lattice, velocities from a
! deterministic pseudo-random sequence with zero total momentum.
subroutine lattice(ncell, spacing)
  use md_state
  implicit none
  integer, intent(in) :: ncell
  double precision, intent(in) :: spacing
  integer :: i, j, k, p
  double precision :: seed, sx, sy, sz
  np = ncell**3
  box = ncell * spacing
  p = 0
  seed = 0.1234567d0
  do k = 1, ncell
    do j = 1, ncell
      do i = 1, ncell
        p = p + 1
        x(p) = (i - 0.5d0) * spacing
        y(p) = (j - 0.5d0) * spacing
        z(p) = (k - 0.5d0) * spacing
        seed = mod(seed * 9821.0d0 + 0.211327d0, 1.0d0)
        vx(p) = seed - 0.5d0
        seed = mod(seed * 9821.0d0 + 0.211327d0, 1.0d0)
        vy(p) = seed - 0.5d0
        seed = mod(seed * 9821.0d0 + 0.211327d0, 1.0d0)
        vz(p) = seed - 0.5d0
      end do
    end do
  end do
  sx = sum(vx(1:np)) / np
  sy = sum(vy(1:np)) / np
  sz = sum(vz(1:np)) / np
  vx(1:np) = vx(1:np) - sx
  vy(1:np) = vy(1:np) - sy
  vz(1:np) = vz(1:np) - sz
end subroutine lattice
