! Part of test_fortran.f90's program: omp_get_max_threads called as an
! external function, without omp_lib's interface, so the call goes to the
! runtime's Fortran entry point (omp_get_max_threads_). A file of its own:
! flang warns when one file declares a routine both ways.
subroutine max_threads_external(n)
  integer, intent(out) :: n
  integer, external :: omp_get_max_threads
  n = omp_get_max_threads()
end subroutine max_threads_external
