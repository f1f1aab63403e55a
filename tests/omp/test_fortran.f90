! gfortran -fopenmp and flang -fopenmp: parallel, do (static, dynamic) with
! reductions, single, critical, atomic, tasks, locks, the omp_lib queries, a
! routine called without omp_lib's interface (the Fortran entry point,
! omp_get_max_threads_: fortran_external.f90, a file of its own, where
! flang sees no omp_lib), and a threadprivate common block whose DATA values
! every thread starts from (flang keeps threadprivate data in the runtime:
! __kmpc_threadprivate_cached).
block data tp_init
  integer :: tp_a
  real :: tp_b(2)
  common /tpc/ tp_a, tp_b
  !$omp threadprivate (/tpc/)
  data tp_a / 32 /
  data tp_b / 2*1. /
end block data tp_init

program test_fortran
  use omp_lib
  implicit none
  integer, parameter :: n = 10000
  integer :: i, nt, hits(n), crit
  integer(kind=8) :: s, want
  integer(kind=omp_lock_kind) :: lck
  integer :: locked, mt, bad
  integer :: tp_a
  real :: tp_b(2)
  common /tpc/ tp_a, tp_b
  !$omp threadprivate (/tpc/)
  call check_library()
  hits = 0
  s = 0
  crit = 0
  nt = 0
  locked = 0
  call omp_init_lock(lck)
  !$omp parallel reduction(+:s)
  !$omp single
  nt = omp_get_num_threads()
  !$omp end single
  !$omp do schedule(dynamic, 7)
  do i = 1, n
    hits(i) = hits(i) + 1
    s = s + i
  end do
  !$omp end do
  !$omp do schedule(static)
  do i = 1, n
    hits(i) = hits(i) + 1
  end do
  !$omp end do
  !$omp critical
  crit = crit + 1
  !$omp end critical
  call omp_set_lock(lck)
  locked = locked + 1
  call omp_unset_lock(lck)
  !$omp end parallel
  call omp_destroy_lock(lck)
  want = int(n, 8) * (n + 1) / 2
  if (s /= want) stop 1
  if (any(hits /= 2)) stop 2
  if (crit /= nt .or. locked /= nt) stop 3
  if (nt /= omp_get_max_threads()) stop 4
  !$omp parallel
  !$omp single
  s = fib(20)
  !$omp end single
  !$omp end parallel
  if (s /= 6765) stop 5
  call max_threads_external(mt)
  if (mt /= omp_get_max_threads()) stop 6
  ! Every thread's copy starts from the DATA values, whatever the initial
  ! thread's copy (member 0's) holds by the time the others first touch
  ! theirs; then each keeps its own.
  bad = 0
  !$omp parallel num_threads(4) reduction(+:bad)
  if (omp_get_thread_num() == 0) tp_a = 99
  !$omp barrier
  if (omp_get_thread_num() > 0 .and. (tp_a /= 32 .or. any(tp_b /= 1.))) bad = bad + 1
  !$omp barrier
  tp_a = omp_get_thread_num()
  tp_b = tp_a + 19.
  !$omp barrier
  if (tp_a /= omp_get_thread_num() .or. any(tp_b /= tp_a + 19.)) bad = bad + 1
  !$omp end parallel
  if (bad /= 0) stop 7
  print *, 'omp fortran: ok'
contains
  ! OMP_TEST_EXPECT_LIB=herd-omp: herd's library is mapped (the kernel names
  ! it by its real path, libherd-omp.so) and the system libgomp is not.
  subroutine check_library()
    character(len=64) :: want
    character(len=1024) :: line
    integer :: u, ios, wlen
    logical :: found, system
    call get_environment_variable('OMP_TEST_EXPECT_LIB', want, wlen)
    if (wlen == 0) return
    found = .false.
    system = .false.
    open(newunit=u, file='/proc/self/maps', action='read', iostat=ios)
    if (ios /= 0) stop 10
    do
      read(u, '(A)', iostat=ios) line
      if (ios /= 0) exit
      if (index(line, want(1:wlen)) > 0) found = .true.
      if (index(line, '/libgomp.so') > 0 .and. index(line, 'herd') == 0) system = .true.
    end do
    close(u)
    if (.not. found) stop 11
    if (system) stop 12
  end subroutine check_library

  recursive integer(kind=8) function fib(k) result(r)
    integer, intent(in) :: k
    integer(kind=8) :: a, b
    if (k < 2) then
      r = k
      return
    end if
    !$omp task shared(a)
    a = fib(k - 1)
    !$omp end task
    !$omp task shared(b)
    b = fib(k - 2)
    !$omp end task
    !$omp taskwait
    r = a + b
  end function fib
end program test_fortran
