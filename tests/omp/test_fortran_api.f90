! The omp_lib routines of OpenMP 4.5 to 5.1 from Fortran (gfortran's
! bindings: by reference, character lengths after the arguments, _8
! variants for integer(8)): each is called and its answer checked where
! the host's answer is fixed. Each failed check stops with its own number.
program test_fortran_api
  use omp_lib
  implicit none
  integer :: kind4, chunk4, n, bad
  integer(kind=8) :: level8, chunk8
  integer(kind=omp_sched_kind) :: sk
  integer(kind=omp_allocator_handle_kind) :: a
  type(omp_alloctrait) :: traits(1)
  integer(kind=omp_event_handle_kind) :: ev
  character(len=64) :: buf
  character(len=8) :: small
  integer :: got, done

  if (omp_get_thread_limit() < 1) stop 1
  call omp_set_schedule(omp_sched_dynamic, 5)
  call omp_get_schedule(sk, chunk4)
  if (sk /= omp_sched_dynamic .or. chunk4 /= 5) stop 2
  chunk8 = 9
  call omp_set_schedule(omp_sched_guided, chunk8)
  call omp_get_schedule(sk, chunk8)
  if (sk /= omp_sched_guided .or. chunk8 /= 9) stop 3
  call omp_set_schedule(omp_sched_static, 0)
  if (omp_get_default_device() /= omp_get_initial_device() .and. omp_get_num_devices() == 0) stop 4
  if (omp_get_device_num() /= omp_get_initial_device()) stop 5
  call omp_set_default_device(omp_get_default_device())
  if (omp_get_num_places() < 0) stop 6
  if (omp_get_num_places() == 0 .and. omp_get_place_num_procs(0) /= 0) stop 7
  if (omp_get_partition_num_places() < 0) stop 8
  if (omp_get_supported_active_levels() < 1) stop 9
  kind4 = omp_get_proc_bind()
  level8 = 0
  if (omp_get_ancestor_thread_num(level8) /= 0) stop 10
  if (omp_get_team_size(level8) /= 1) stop 11
  call omp_set_max_active_levels(level8 + 2)
  if (omp_get_max_active_levels() /= 2) stop 12
  bad = 0
  !$omp parallel num_threads(2) reduction(+:bad)
  level8 = 1
  if (omp_get_ancestor_thread_num(level8) /= omp_get_thread_num()) bad = bad + 1
  if (omp_get_team_size(level8) /= omp_get_num_threads()) bad = bad + 1
  !$omp end parallel
  if (bad /= 0) stop 13

  ! allocators
  traits(1)%key = omp_atk_alignment
  traits(1)%value = 256
  a = omp_init_allocator(omp_default_mem_space, 1, traits)
  if (a == omp_null_allocator) stop 14
  call omp_set_default_allocator(a)
  if (omp_get_default_allocator() /= a) stop 15
  call omp_set_default_allocator(omp_default_mem_alloc)
  call omp_destroy_allocator(a)
  if (omp_get_default_allocator() /= omp_default_mem_alloc) stop 16

  ! affinity display
  call omp_set_affinity_format("T%0.3n")
  n = omp_get_affinity_format(buf)
  if (n /= 6 .or. buf /= "T%0.3n") stop 17
  n = omp_capture_affinity(buf, "N%N")
  if (n /= 2 .or. buf /= "N1") stop 18
  n = omp_capture_affinity(small, "0123456789")
  if (n /= 10 .or. small /= "01234567") stop 19
  n = omp_capture_affinity(buf, "")
  if (n /= 4 .or. buf /= "T000") stop 20
  call omp_display_affinity("fortran display %n of %N")

  ! detach: the task ends once omp_fulfill_event has been called
  got = 0
  done = 0
  !$omp parallel num_threads(2)
  !$omp single
  !$omp task detach(ev) shared(done)
  done = 1
  !$omp end task
  !$omp task shared(got, done)
  got = 1
  call omp_fulfill_event(ev)
  !$omp end task
  !$omp taskwait
  if (got /= 1 .or. done /= 1) bad = bad + 1
  !$omp end single
  !$omp end parallel
  if (bad /= 0) stop 21

  n = omp_pause_resource_all(omp_pause_soft) ! either answer is allowed
  call check_places()
  print *, 'omp fortran api: ok'
contains
  ! The places routines in both integer kinds give the same answers (the
  ! _8 variants widen the C routines' ints). With OMP_PLACES set to an
  ! explicit list (omp.fortran_api.places) there is at least one place.
  subroutine check_places()
    integer :: i, np, status
    integer(kind=8) :: i8
    integer, allocatable :: ids(:)
    integer(kind=8), allocatable :: ids8(:)
    call get_environment_variable('OMP_PLACES', status=status)
    if (status == 0 .and. omp_get_num_places() < 1) stop 22
    do i = 0, omp_get_num_places() - 1
      i8 = i
      np = omp_get_place_num_procs(i)
      if (np < 1 .or. omp_get_place_num_procs(i8) /= np) stop 23
      allocate(ids(np), ids8(np))
      ids8 = -1
      call omp_get_place_proc_ids(i, ids)
      call omp_get_place_proc_ids(i8, ids8)
      if (any(ids8 /= ids) .or. any(ids < 0)) stop 24
      deallocate(ids, ids8)
    end do
  end subroutine check_places
end program test_fortran_api
