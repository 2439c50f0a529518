c     Loops that are serial around a parallel loop, turned inside out:
c     colupd adds a scaled column at a time to y (one kernel per column
c     as written; one over the rows once interchanged), colrec runs an
c     independent recurrence down every column (one kernel over the
c     columns). shear cannot be turned (its rows read the row below from
c     the column before, which another row writes): w is set between.
      subroutine colupd(m, n, alpha, a, lda, x, y)
      integer m, n, lda, i, j
      double precision alpha, a(lda, n), x(n), y(m), temp
      do 20 j = 1, n
         temp = alpha*x(j)
         do 10 i = 1, m
            y(i) = y(i) + temp*a(i, j)
   10    continue
   20 continue
      return
      end

      subroutine colrec(m, n, c, a)
      integer m, n, i, j
      double precision c, a(m, n)
      do i = 2, m
         do j = 1, n
            a(i, j) = a(i, j) + c*a(i-1, j)
         enddo
      enddo
      return
      end

      subroutine shear(m, n, c, x, a)
      integer m, n, i, j
      double precision c, x(n), a(m + 1, n), w
      do j = 2, n
         w = c*x(j)
         do i = 1, m
            a(i, j) = a(i, j) + w*a(i+1, j-1)
         enddo
      enddo
      return
      end

c     colup2 has two scalars per column, the second from the first, and
c     two updates per row: on the host four columns at a time go through
c     the rows (unrolled and jammed), the columns left (n not a multiple
c     of 4) one at a time. colup4's REAL temp rounds the DOUBLE value it
c     is set to: not jammed.
      subroutine colup2(m, n, alpha, a, lda, x, y, z)
      integer m, n, lda, i, j
      double precision alpha, a(lda, n), x(n), y(m), z(m), t, s
      do j = 1, n
         t = alpha*x(j)
         s = t/(1.0d0 + dble(j))
         do i = 1, m
            y(i) = y(i) + t*a(i, j)
            z(i) = z(i) - s/(2.0d0 + a(i, j)*a(i, j))
         enddo
      enddo
      return
      end

      subroutine colup4(m, n, alpha, a, x, y)
      integer m, n, i, j
      double precision alpha, a(m, n), x(n), y(m)
      real temp
      do j = 1, n
         temp = alpha*x(j)
         do i = 1, m
            y(i) = y(i) + temp*a(i, j)
         enddo
      enddo
      return
      end
