c     a statement past column 72: gfortran reads it whole with -ffixed-line-length-132
      subroutine wide(n, a, b, c)
      integer n, i
      double precision a(n), b(n), c(n)
      do 10 i = 1, n
         c(i) = a(i)                                                     + 2.0d0 * b(i)
   10 continue
      end
