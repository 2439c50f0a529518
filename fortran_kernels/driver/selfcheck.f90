! selfcheck.f90 -- checks every sample kernel against an independent
! reference (Fortran intrinsics, conservation laws, known values), so the
! originals that ports are compared with are known to be right.
! Written for port-fortran. Link against the objects of every sample file.
! Prints one line per failed check and a final "SELFCHECK FAILURES <n>".
program selfcheck
  use stencil2d_mod, only: jacobi2d, resid2d
  use stencil3d_mod, only: jacobi3d, laplace3d
  use csr_mod, only: csr_spmv
  use pic_mod, only: pic_gather, pic_scatter
  use omp_kernels_mod, only: omp_dot, omp_smooth2d
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  double precision, external :: ddot, dnrm2, damax
  real, external :: sdot
  integer, external :: idmaxl
  double precision :: alpha, dt, rdx2
  common /heatc/ alpha, dt, rdx2
  double precision :: coef(0:8)
  integer :: ndeg
  common /polyc/ coef, ndeg
  integer :: nfail = 0

  call rseed()
  call check_blas1()
  call check_single_complex()
  call check_dense()
  call check_reductions()
  call check_stencils()
  call check_irregular()
  call check_serial()
  call check_refused()
  write (*, '(a, i0)') 'SELFCHECK FAILURES ', nfail

contains

  subroutine rseed()
    integer :: k
    integer, allocatable :: s(:)
    call random_seed(size=k)
    allocate(s(k))
    s = 20261129
    call random_seed(put=s)
  end subroutine rseed

  ! uniform in [-1, 1]
  subroutine rnd(a)
    real(dp), intent(out) :: a(:)
    call random_number(a)
    a = 2.0_dp * a - 1.0_dp
  end subroutine rnd

  subroutine rnd2(a)
    real(dp), intent(out) :: a(:, :)
    call random_number(a)
    a = 2.0_dp * a - 1.0_dp
  end subroutine rnd2

  subroutine expect(name, err, tol)
    character(*), intent(in) :: name
    real(dp), intent(in) :: err, tol
    if (.not. (err <= tol)) then
      nfail = nfail + 1
      write (*, '(a, a, a, es10.3)') 'FAIL ', name, ' error ', err
    end if
  end subroutine expect

  subroutine check_blas1()
    integer, parameter :: n = 13
    real(dp) :: x(2*n), y(n), y0(n), ref(n), s
    integer :: i
    call rnd(x); call rnd(y0)
    y = y0
    call daxpy(n, 0.7_dp, x, 1, y, 1)
    call expect('daxpy unit', maxval(abs(y - (y0 + 0.7_dp * x(1:n)))), 1e-15_dp)
    ! incx = 2, incy = -1: logical element i of y is y(n+1-i)
    y = y0
    call daxpy(n, 0.7_dp, x, 2, y, -1)
    do i = 1, n
      ref(n + 1 - i) = y0(n + 1 - i) + 0.7_dp * x(1 + 2 * (i - 1))
    end do
    call expect('daxpy strided', maxval(abs(y - ref)), 1e-15_dp)
    call expect('ddot unit', abs(ddot(n, x, 1, y0, 1) - dot_product(x(1:n), y0)), 1e-14_dp)
    s = 0
    do i = 1, n
      s = s + x(1 + 2 * (n - i)) * y0(i)
    end do
    call expect('ddot strided', abs(ddot(n, x, -2, y0, 1) - s), 1e-14_dp)
    call expect('dnrm2', abs(dnrm2(9, x, 3) - sqrt(sum(x(1:25:3)**2))), 1e-14_dp)
    ref(1:n) = x(1:n)
    call dscal(7, -2.0_dp, ref, 2)
    call expect('dscal', maxval(abs(ref(1:13:2) + 2.0_dp * x(1:13:2))) &
                + maxval(abs(ref(2:12:2) - x(2:12:2))), 0.0_dp)
  end subroutine check_blas1

  subroutine check_single_complex()
    integer, parameter :: n = 10
    real(dp) :: a(n), b(n), c(n), d(n)
    real :: sx(n), sy(n), sy0(n)
    complex(8) :: zx(2*n), zy(n), zy0(n), za
    complex(4) :: cx(n), cy(n), cres
    call rnd(a); call rnd(b); call rnd(c); call rnd(d)
    sx = real(a); sy0 = real(b)
    sy = sy0
    call saxpy(n, 1.5, sx, 1, sy, 1)
    call expect('saxpy', real(maxval(abs(sy - (sy0 + 1.5 * sx))), dp), 1e-6_dp)
    sy = sy0
    call saxpy(5, 1.5, sx, 2, sy, 1)
    call expect('saxpy strided', real(maxval(abs(sy(1:5) - (sy0(1:5) + 1.5 * sx(1:9:2)))), dp), 1e-6_dp)
    call expect('sdot', real(abs(sdot(n, sx, 1, sy0, 1) - dot_product(sx, sy0)), dp), 1e-5_dp)
    zx(1:n) = cmplx(a, b, dp); zx(n+1:) = cmplx(c, d, dp)
    zy0 = cmplx(c, a, dp); za = (0.5_dp, -0.25_dp)
    zy = zy0
    call zaxpy(n, za, zx, 2, zy, 1)
    call expect('zaxpy', maxval(abs(zy - (zy0 + za * zx(1:2*n-1:2)))), 1e-15_dp)
    cx = cmplx(a, b, 4); cy = cmplx(c, d, 4)
    call cdotc_sub(n, cx, cy, cres)
    call expect('cdotc_sub', real(abs(cres - dot_product(cx, cy)), dp), 1e-5_dp)
  end subroutine check_single_complex

  subroutine check_dense()
    integer, parameter :: m = 5, n = 4, k = 3, ld = 7
    real(dp) :: a(ld, 8), b(ld, 8), c(ld, 8), c0(ld, 8), x(8), y(8), y0(8)
    real(dp) :: al, be
    character(1) :: ta, tb
    real(dp) :: opa(m, k), opb(k, n)
    integer :: ia, ib
    call rnd2(a); call rnd2(b); call rnd2(c0); call rnd(x); call rnd(y0)
    al = 0.75_dp; be = -0.5_dp
    y = y0
    call dgemv('N', m, n, al, a, ld, x, be, y)
    call expect('dgemv N', maxval(abs(y(1:m) - (al * matmul(a(1:m, 1:n), x(1:n)) + be * y0(1:m)))) &
                + maxval(abs(y(m+1:) - y0(m+1:))), 1e-14_dp)
    y = y0
    call dgemv('t', m, n, al, a, ld, x, be, y)
    call expect('dgemv T', maxval(abs(y(1:n) - (al * matmul(transpose(a(1:m, 1:n)), x(1:m)) &
                + be * y0(1:n)))), 1e-14_dp)
    do ia = 0, 1
      do ib = 0, 1
        ta = merge('N', 'T', ia == 0); tb = merge('n', 't', ib == 0)
        if (ia == 0) then
          opa = a(1:m, 1:k)
        else
          opa = transpose(a(1:k, 1:m))
        end if
        if (ib == 0) then
          opb = b(1:k, 1:n)
        else
          opb = transpose(b(1:n, 1:k))
        end if
        c = c0
        call dgemm(ta, tb, m, n, k, al, a, ld, b, ld, be, c, ld)
        call expect('dgemm ' // ta // tb, maxval(abs(c(1:m, 1:n) - (al * matmul(opa, opb) &
                    + be * c0(1:m, 1:n)))) + maxval(abs(c(m+1:, :) - c0(m+1:, :))), 1e-14_dp)
      end do
    end do
    c = c0
    call dtrans(m, n, a, ld, c, ld)
    call expect('dtrans', maxval(abs(c(1:n, 1:m) - transpose(a(1:m, 1:n)))), 0.0_dp)
  end subroutine check_dense

  subroutine check_reductions()
    integer, parameter :: n = 101
    real(dp) :: x(n), y(n), xmin, xmax, xmean, xvar, s
    call rnd(x); call rnd(y)
    call dmnmx(n, x, xmin, xmax)
    call expect('dmnmx', abs(xmin - minval(x)) + abs(xmax - maxval(x)), 0.0_dp)
    call expect('idmaxl', real(abs(idmaxl(n, x) - maxloc(x, 1)), dp), 0.0_dp)
    call dmvar(n, x, xmean, xvar)
    call expect('dmvar', abs(xmean - sum(x) / n) + abs(xvar - sum((x - sum(x) / n)**2) / n), 1e-14_dp)
    call expect('damax', abs(damax(n, x) - maxval(abs(x))), 0.0_dp)
    call omp_dot(n, x, y, s)
    call expect('omp_dot', abs(s - dot_product(x, y)), 1e-13_dp)
  end subroutine check_reductions

  subroutine check_stencils()
    integer, parameter :: n = 6, nx = 5, ny = 4, nz = 3
    real(dp) :: u(0:n+1, 0:n+1), un(0:n+1, 0:n+1), f(n, n), rms
    real(dp) :: r1(0:n+1), r1n(0:n+1), du(nx, ny), h(0:nx+1, 0:ny+1), b(nx, ny)
    real(dp) :: u3(0:nx+1, 0:ny+1, 0:nz+1), v3(0:nx+1, 0:ny+1, 0:nz+1), l3(nx, ny, nz)
    integer :: i, j, k
    call rnd2(u); call rnd2(un); call rnd2(f)
    v3 = un(0, 0)
    call jacobi2d(n, 0.1_dp, f, u, un)
    call expect('jacobi2d', maxval(abs(un(1:n, 1:n) - 0.25_dp * (u(0:n-1, 1:n) + u(2:n+1, 1:n) &
                + u(1:n, 0:n-1) + u(1:n, 2:n+1) + 0.1_dp * f))), 1e-15_dp)
    call resid2d(n, u, un, rms)
    call expect('resid2d', abs(rms - sqrt(sum((un(1:n, 1:n) - u(1:n, 1:n))**2) / n**2)), 1e-15_dp)
    alpha = 2.0_dp; dt = 0.01_dp; rdx2 = 4.0_dp
    call rnd(r1)
    call heat1d(n, r1, r1n)
    call expect('heat1d', maxval(abs(r1n(1:n) - (r1(1:n) + 0.08_dp * (r1(0:n-1) - 2 * r1(1:n) &
                + r1(2:n+1))))) + abs(r1n(0) - r1(0)) + abs(r1n(n+1) - r1(n+1)), 1e-15_dp)
    call rnd2(h)
    call heat2d(nx, ny, h, du)
    call expect('heat2d', maxval(abs(du - 0.08_dp * (h(0:nx-1, 1:ny) + h(2:nx+1, 1:ny) &
                + h(1:nx, 0:ny-1) + h(1:nx, 2:ny+1) - 4 * h(1:nx, 1:ny)))), 1e-15_dp)
    call omp_smooth2d(nx, ny, h, b)
    call expect('omp_smooth2d', maxval(abs(b - 0.2_dp * (h(1:nx, 1:ny) + h(0:nx-1, 1:ny) &
                + h(2:nx+1, 1:ny) + h(1:nx, 0:ny-1) + h(1:nx, 2:ny+1)))), 1e-15_dp)
    ! a quadratic: the 7-point Laplacian is exact, 2+2+2 = 6
    do k = 0, nz + 1
      do j = 0, ny + 1
        do i = 0, nx + 1
          u3(i, j, k) = real(i * i + j * j + k * k, dp)
        end do
      end do
    end do
    call laplace3d(nx, ny, nz, 1.0_dp, u3, l3)
    call expect('laplace3d', maxval(abs(l3 - 6.0_dp)), 1e-12_dp)
    call jacobi3d(nx, ny, nz, 1.0_dp, 1.0_dp, u3, v3)
    call expect('jacobi3d', maxval(abs(v3(1:nx, 1:ny, 1:nz) - (7 * u3(1:nx, 1:ny, 1:nz) + 6))) &
                + abs(v3(0, 0, 0) - un(0, 0)), 1e-12_dp)
  end subroutine check_stencils

  subroutine check_irregular()
    integer, parameter :: nr = 7, nc = 6, np = 50, ng = 8
    real(dp) :: dense(nr, nc), x(nc), y(nr), vals(nr * nc), r(nr, nc)
    integer :: rowptr(nr + 1), colidx(nr * nc), nnz, i, j, idx(np), ih(ng), ih2(ng)
    real(dp) :: xp(np), eg(0:ng), ep(np), rho(0:ng), px(np), py(np), pz(np), pm(np)
    real(dp) :: ax(np), ay(np), az(np), s(np)
    ! CSR from a random matrix with about half the entries dropped
    call rnd2(dense); call random_number(r); call rnd(x)
    where (r < 0.5_dp) dense = 0
    nnz = 0
    rowptr(1) = 1
    do i = 1, nr
      do j = 1, nc
        if (dense(i, j) /= 0) then
          nnz = nnz + 1
          colidx(nnz) = j
          vals(nnz) = dense(i, j)
        end if
      end do
      rowptr(i + 1) = nnz + 1
    end do
    call csr_spmv(nr, nc, nnz, rowptr, colidx, vals, x, y)
    call expect('csr_spmv', maxval(abs(y - matmul(dense, x))), 1e-14_dp)
    ! histograms
    call random_number(xp)
    idx = 1 + int(xp * ng)
    ih = 0
    call histi(np, idx, ng, ih)
    do i = 1, ng
      ih2(i) = count(idx == i)
    end do
    call expect('histi', real(maxval(abs(ih - ih2)), dp), 0.0_dp)
    call rnd(xp)
    xp(1) = -3.0_dp; xp(2) = 5.0_dp
    ih = 0
    call histx(np, xp, ng, ih)
    ih2 = 0
    do i = 1, np
      j = min(max(1 + int(floor((xp(i) + 1) * 0.5_dp * ng)), 1), ng)
      ih2(j) = ih2(j) + 1
    end do
    call expect('histx', real(maxval(abs(ih - ih2)), dp), 0.0_dp)
    ! PIC: a linear field is interpolated exactly; charge is conserved
    call rnd(xp)
    xp = xp * 20
    do i = 0, ng
      eg(i) = real(i, dp)
    end do
    call pic_gather(np, ng, xp, eg, ep)
    call expect('pic_gather', maxval(abs(ep - modulo(xp, real(ng, dp)))), 1e-13_dp)
    rho = 0
    call pic_scatter(np, ng, 0.5_dp, xp, rho)
    call expect('pic_scatter', abs(sum(rho(0:ng-1)) - 0.5_dp * np) + abs(rho(ng) - rho(0)), 1e-13_dp)
    ! n-body: Newton's third law, total momentum change is zero
    call rnd(px); call rnd(py); call rnd(pz); call random_number(pm)
    call nbody_forces(np, 0.1_dp, px, py, pz, pm, ax, ay, az)
    s = pm * ax
    call expect('nbody_forces', abs(sum(pm * ax)) + abs(sum(pm * ay)) + abs(sum(pm * az)), &
                1e-12_dp * sum(abs(s)) + 1e-13_dp)
  end subroutine check_irregular

  subroutine check_serial()
    integer, parameter :: n = 9
    real(dp) :: d(n), x(0:n+1), cp(n), s(n), ps(n), rr(10000), w(n), z(n)
    real(dp) :: sr
    integer :: i, seed
    call rnd(d)
    x = 0
    call tridif(n, -0.7_dp, d, x(1:n), cp)
    sr = 0.7_dp
    call expect('tridif', maxval(abs(-sr * x(0:n-1) + (1 + 2 * sr) * x(1:n) - sr * x(2:n+1) - d)), 1e-14_dp)
    call psum(n, d, ps)
    sr = 0
    do i = 1, n
      sr = sr + d(i)
      s(i) = sr
    end do
    call expect('psum', maxval(abs(ps - s)), 0.0_dp)
    ! the minimal standard generator from seed 1 reaches 1043618065 after 10000 steps
    seed = 1
    call ranlcg(10000, seed, rr)
    call expect('ranlcg', real(abs(seed - 1043618065), dp) + abs(rr(1) - 16807.0_dp / 2147483647.0_dp), 0.0_dp)
    call rnd(w); call rnd(z)
    coef = 0; coef(0:3) = [1.0_dp, -2.0_dp, 0.5_dp, 3.0_dp]; ndeg = 3
    call polyev(n, w, s)
    call expect('polyev', maxval(abs(s - (1 - 2 * w + 0.5_dp * w**2 + 3 * w**3))), 1e-14_dp)
    ndeg = 99
    coef(8) = 1
    call polyev(n, w, s)
    call expect('polyev clamp', maxval(abs(s - (1 - 2 * w + 0.5_dp * w**2 + 3 * w**3 + w**8))), 1e-14_dp)
    call waxpby(n, 2.0_dp, w, -1.0_dp, z, s)
    call expect('waxpby', maxval(abs(s - (2 * w - z))), 1e-15_dp)
    call vdist(n, w, z, sr)
    call expect('vdist', abs(sr - sqrt(sum((w - z)**2))), 1e-14_dp)
  end subroutine check_serial

  subroutine check_refused()
    integer, parameter :: n = 6
    real(dp) :: x(n), y(n), u(0:n+1), un(0:n+1)
    call rnd(x)
    call smooth3(n, x, y)
    call expect('smooth3', maxval(abs(y(2:n-1) - 0.25_dp * (x(1:n-2) + 2 * x(2:n-1) + x(3:n)))) &
                + abs(y(1) - x(1)) + abs(y(n) - x(n)), 1e-15_dp)
    call vinit(n, y, 3.0_dp)
    call expect('vinit', maxval(abs(y - 3.0_dp)), 0.0_dp)
    call vzero(n, y)
    call expect('vzero', maxval(abs(y)), 0.0_dp)
    u = 0; u(0) = 1; un = u
    call relaxp(n, 1, 1.0d-3, u, un)
    call expect('relaxp', abs(u(1) - 0.5_dp) + maxval(abs(u(2:n))), 0.0_dp)
  end subroutine check_refused

end program selfcheck
