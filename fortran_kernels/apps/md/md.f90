! md.f90 -- md: Lennard-Jones particles in a periodic box, velocity Verlet (written for
! port-fortran). Module state, routines of other files called with its arrays, a time loop,
! energies every NOUT steps, positions written at the end, a self-check of energy
! conservation. Input md.in: ncell nsteps nout / spacing dt
program md
  use md_state
  implicit none
  integer :: ncell, nsteps, nout, step, c0, c1, rate
  double precision :: spacing, epot, ek, etot0, etot, drift_max, ekin
  external ekin
  open(10, file='md.in', status='old')
  read(10, *) ncell, nsteps, nout
  read(10, *) spacing, dt
  close(10)
  if (ncell**3 > nmax) stop 'md: too many particles for nmax'
  call lattice(ncell, spacing)
  write(*, '(a, i6, a, f8.3, a, i6)') ' md: particles', np, '  box', box, '  steps', nsteps
  call system_clock(c0, rate)
  call forces(np, x, y, z, fx, fy, fz, box, rcut, epot)
  etot0 = epot + ekin(np, vx, vy, vz)
  drift_max = 0.0d0
  do step = 1, nsteps
    call kick(np, vx, vy, vz, fx, fy, fz, 0.5d0 * dt)
    call drift(np, x, y, z, vx, vy, vz, dt, box)
    call forces(np, x, y, z, fx, fy, fz, box, rcut, epot)
    call kick(np, vx, vy, vz, fx, fy, fz, 0.5d0 * dt)
    if (mod(step, nout) == 0) then
      ek = ekin(np, vx, vy, vz)
      etot = epot + ek
      drift_max = max(drift_max, abs(etot - etot0) / abs(etot0))
      write(*, '(a, i6, 3(a, es16.8))') ' step', step, '  epot', epot, '  ekin', ek, '  etot', etot
    end if
  end do
  call system_clock(c1)
  call dump_positions('positions.dat', np, x, y, z, max(1, np / 16))
  if (drift_max < 1.0d-3) then
    write(*, '(a, es10.2)') ' ENERGY CONSERVED: relative drift', drift_max
  else
    write(*, '(a, es10.2)') ' ENERGY NOT CONSERVED: relative drift', drift_max
  end if
  write(*, '(a, f10.3)') ' wall time (s)', dble(c1 - c0) / dble(rate)
end program md
