"""port-fortran: port legacy Fortran kernels to Kokkos C++ and prove each port."""

__version__ = "0.1.0"
