c     a statement past column 72: gfortran reads it whole with -ffixed-line-length-132
      subroutine wide(n, a, b, c)
      integer n, i
      double precision a(n), b(n), c(n)
      do 10 i = 1, n
         c(i) = a(i)                                                     + 2.0d0 * b(i)
   10 continue
      end
      subroutine widew(n, a, b, c, s)
      integer n, i
      double precision a(n), b(n), c(n), s
      do 20 i = 1, n
         c(i) = a(i)                                                     + 3.0d0 * b(i)
   20 continue
      s = c(1)                                                           + c(n)
      write(*, *) 'widew', n
      end
