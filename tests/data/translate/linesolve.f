c     Line sweeps in the NPB SP style (written for port-fortran's tests): COMMON work
c     arrays cv and rhon are filled at every (j, k) for i = 0, gp(1) - 1 and then read at
c     i - 1 and i + 1 for i = 1, nx2, where nx2 is a COMMON member the program sets
c     (gp(1) - 2 in SP): nothing relates the two bounds, so a read may fall outside what
c     the iteration wrote and see the array as it was before the loop.
      subroutine xsweep
      integer nmax
      parameter (nmax=16)
      integer gp(3), nx2, ny2, nz2, i, j, k
      double precision u(3, 0:nmax-1, 0:nmax-1, 0:nmax-1),
     >                 r(0:nmax-1, 0:nmax-1, 0:nmax-1)
      double precision cv(-2:nmax+1), rhon(-2:nmax+1), dt, c2, ru
      common /global/ gp, nx2, ny2, nz2
      common /fld/ u, r
      common /work_1d/ cv, rhon
      common /cst/ dt, c2
      do k = 1, nz2
         do j = 1, ny2
            do i = 0, gp(1) - 1
               ru = 1.0d0 / (2.0d0 + u(1, i, j, k))
               cv(i) = u(2, i, j, k) * ru
               rhon(i) = dmax1(dt + ru, c2 * u(3, i, j, k))
            enddo
            do i = 1, nx2
               r(i, j, k) = r(i, j, k) + dt * (cv(i+1) - cv(i-1))
     >                    - c2 * rhon(i) * rhon(i+1)
            enddo
         enddo
      enddo
      return
      end

c     The fill reads the array it fills (a recurrence along i): an iteration's reads may
c     see what the previous (j, k) left, so the sweep stays serial.
      subroutine xrecur
      integer nmax
      parameter (nmax=16)
      integer gp(3), nx2, ny2, nz2, i, j, k
      double precision u(3, 0:nmax-1, 0:nmax-1, 0:nmax-1),
     >                 r(0:nmax-1, 0:nmax-1, 0:nmax-1)
      double precision cv(-2:nmax+1), rhon(-2:nmax+1), dt, c2
      common /global/ gp, nx2, ny2, nz2
      common /fld/ u, r
      common /work_1d/ cv, rhon
      common /cst/ dt, c2
      do k = 1, nz2
         do j = 1, ny2
            do i = 0, gp(1) - 1
               cv(i) = u(2, i, j, k) + dt * cv(i - 1)
            enddo
            do i = 1, nx2
               r(i, j, k) = cv(i+1) - cv(i-1)
            enddo
         enddo
      enddo
      return
      end

c     The fill is conditional: iterations write different elements, so a read outside
c     what one wrote may see another's value; the sweep stays serial.
      subroutine xcond
      integer nmax
      parameter (nmax=16)
      integer gp(3), nx2, ny2, nz2, i, j, k
      double precision u(3, 0:nmax-1, 0:nmax-1, 0:nmax-1),
     >                 r(0:nmax-1, 0:nmax-1, 0:nmax-1)
      double precision cv(-2:nmax+1), rhon(-2:nmax+1), dt, c2
      common /global/ gp, nx2, ny2, nz2
      common /fld/ u, r
      common /work_1d/ cv, rhon
      common /cst/ dt, c2
      do k = 1, nz2
         do j = 1, ny2
            do i = 0, gp(1) - 1
               if (u(1, i, j, k) .gt. 0.0d0) cv(i) = u(2, i, j, k)
            enddo
            do i = 1, nx2
               r(i, j, k) = cv(i+1) - cv(i-1)
            enddo
         enddo
      enddo
      return
      end

c     A norm over the interior whose loop bounds read COMMON /global/ (gp): a kernel's
c     policy is built on the host, where a GPU's copy of the block cannot be read, so the
c     bounds are computed first (once, as Fortran evaluates them on entry to the DO).
      subroutine xnorm(rms)
      integer nmax
      parameter (nmax=16)
      integer gp(3), nx2, ny2, nz2, i, j, k, m
      double precision u(3, 0:nmax-1, 0:nmax-1, 0:nmax-1),
     >                 r(0:nmax-1, 0:nmax-1, 0:nmax-1)
      double precision rms(3), add
      common /global/ gp, nx2, ny2, nz2
      common /fld/ u, r
      do m = 1, 3
         rms(m) = 0.0d0
      enddo
      do k = 1, gp(3) - 2
         do j = 1, gp(2) - 2
            do i = 1, gp(1) - 2
               do m = 1, 3
                  add = u(m, i, j, k) - r(i, j, k)
                  rms(m) = rms(m) + add * add
               enddo
            enddo
         enddo
      enddo
      return
      end

c     The same norm taken after each of nit relaxation steps of a time loop (a host loop
c     around kernels): the bounds of the kernels inside it are computed before each one.
      subroutine xsteps(nit, rms)
      integer nmax
      parameter (nmax=16)
      integer gp(3), nx2, ny2, nz2, i, j, k, it, nit
      double precision u(3, 0:nmax-1, 0:nmax-1, 0:nmax-1),
     >                 r(0:nmax-1, 0:nmax-1, 0:nmax-1)
      double precision rms(nit)
      common /global/ gp, nx2, ny2, nz2
      common /fld/ u, r
      do it = 1, nit
         do k = 1, gp(3) - 2
            do j = 1, gp(2) - 2
               do i = 1, gp(1) - 2
                  r(i, j, k) = 0.5d0 * r(i, j, k)
     >                       + 0.25d0 * u(1, i, j, k)
               enddo
            enddo
         enddo
         rms(it) = 0.0d0
         do k = 1, gp(3) - 2
            rms(it) = rms(it) + r(1, 1, k) * r(1, 1, k)
         enddo
      enddo
      return
      end
