! pf_runtime_mod.f90 -- written by port-fortran: the calls an application's modern tree makes
! to keep host code coherent with arrays the ports keep on the device (pf_runtime.cpp).
! Each takes an array of any type and rank (an assumed-rank descriptor: never a copy). The
! syncs have no INTENT: they may write the array (a copy back), which the compiler must not
! assume away.
module pf_runtime_mod
  implicit none
  interface
    subroutine pf_resident(x) bind(C, name="pf_resident")
      type(*), dimension(..), intent(in) :: x
    end subroutine pf_resident
    subroutine pf_host_read(x) bind(C, name="pf_host_read")
      type(*), dimension(..) :: x
    end subroutine pf_host_read
    subroutine pf_host_write(x) bind(C, name="pf_host_write")
      type(*), dimension(..) :: x
    end subroutine pf_host_write
    subroutine pf_release(x) bind(C, name="pf_release")
      type(*), dimension(..) :: x
    end subroutine pf_release
  end interface
end module pf_runtime_mod
