c     Sums of squares per component over a grid, in the style of the norm routines of
c     CFD codes: the sums go into a small array indexed by an inner component loop, and
c     the exact solution at each point comes from a routine that fills a scratch array.
      subroutine pointval(x, y, z, vals)
      double precision x, y, z, vals(5)
      integer m
      do m = 1, 5
         vals(m) = dble(m) + x*(1.0d0 + y*(2.0d0 + z*dble(m)))
      enddo
      return
      end

      subroutine sqnorm(nx, ny, nz, h, u, rms, big)
      integer nx, ny, nz
      double precision h, u(5, nx, ny, nz), rms(5), big(2)
      integer i, j, k, m
      double precision dev(5), add
      do k = 1, nz
         do j = 1, ny
            do i = 1, nx
               call pointval(dble(i)*h, dble(j)*h, dble(k)*h, dev)
               do m = 1, 5
                  add = u(m, i, j, k) - dev(m)
                  rms(m) = rms(m) + add*add
               enddo
               do m = 1, 2
                  big(m) = max(big(m), abs(u(m, i, j, k)))
               enddo
            enddo
         enddo
      enddo
      return
      end
