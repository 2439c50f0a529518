/* twice its argument: a C helper the Fortran calls (gfortran's name: ctwice_) */
double ctwice_(const double *a) { return 2.0 * *a; }
