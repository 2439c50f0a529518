! main.f90 -- wave90: a pulse travelling along a string of two materials, absorbed at the
! ends (written for port-fortran). Legacy F90 style: module state, external routines in
! other files called with the module's arrays, a time loop, a report every NOUT steps, a
! snapshot file and a self-check at the end. Input wave.in: n nsteps nout / cfl sigma
program wave
  use params
  use fields
  use diagnostics
  implicit none
  integer :: step, i, c0, c1, rate
  double precision :: e0, e, umax
  logical :: ok
  call read_input('wave.in')
  call allocate_fields(n)
  write(*, '(a, i8, a, i7, a, f6.3)') ' wave90: points', n, '  steps', nsteps, '  cfl', cfl
  call system_clock(c0, rate)
  call init_pulse(n, u, uold, c2, cfl, dx)
  e0 = energy(n, u, uold, c2)
  ok = .true.
  do step = 1, nsteps
    call leapfrog(n, u, uold, unew, c2)
    call sponge(n, unew, u, n / 10, sigma)
    call rotate(n, uold, u, unew)
    if (mod(step, nout) == 0) then
      e = energy(n, u, uold, c2)
      umax = 0.0d0
      do i = 1, n
        umax = max(umax, abs(u(i)))
      end do
      call report(step, e, umax)
      if (e > e0 * (1.0d0 + 1.0d-6)) ok = .false.
    end if
  end do
  call system_clock(c1)
  call write_snapshot('snapshot.dat', n, u, max(1, n / 20))
  if (ok) then
    write(*, '(a)') ' CHECK OK: the energy never grew'
  else
    write(*, '(a)') ' CHECK FAILED: the energy grew'
  end if
  write(*, '(a, f10.3)') ' elapsed (s)', dble(c1 - c0) / dble(rate)
  call free_fields()
end program wave
