/* twice its argument: a C helper the Fortran calls (gfortran's name: ctwice_); it calls a
   C function of another file of the tree (cfactor.c), which only C calls */
double cfactor(void);
double ctwice_(const double *a) { return cfactor() * *a; }
