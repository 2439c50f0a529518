/* the factor ctwice_ multiplies by: only C calls it, so the program's link needs this
   file because ctwice.c does (the C sources are linked transitively) */
double cfactor(void) { return 2.0; }
