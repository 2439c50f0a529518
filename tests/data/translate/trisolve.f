c     Forward substitution with a lower triangular matrix (written for port-fortran's
c     tests): x(i) is summed over j < i while x(j) is read, so the loop over j is a
c     reduction into one element that its other reads never name; the loop over i
c     stays serial (each row needs the rows before it).
      subroutine ltsolv(n, l, b, x)
      integer n, i, j
      double precision l(n, n), b(n), x(n)
      do i = 1, n
         x(i) = b(i)
         do j = 1, i - 1
            x(i) = x(i) - l(i, j) * x(j)
         enddo
         x(i) = x(i) / l(i, i)
      enddo
      return
      end
