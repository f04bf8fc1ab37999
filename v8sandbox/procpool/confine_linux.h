// What the constructor in confine_linux.c obtained; read by confine_linux.go.

#define ISOGATE_WORKER_COMMAND "sandbox-worker"
#define ISOGATE_WORKER_ID 65534 /* nobody: the worker's uid and gid */
#define ISOGATE_WORKER_NOFILE 64
/* A worker's threads and processes (RLIMIT_NPROC in its own user namespace).
   A worker needs about 15 (2 cores, 8 slots, under load): the Go runtime's
   threads (GOMAXPROCS plus one per pinned isolate and per blocking call)
   and V8's platform workers (at most 16). 256 leaves room for large hosts
   and keeps a thread bomb far below any pid_max. */
#define ISOGATE_WORKER_NPROC 256
#define ISOGATE_MAX_LANES 16 /* call lanes: pipe pairs at fds 3, 4, 5, 6… (lanes.go) */

struct isogate_confine_report {
	int worker; /* started as a sandbox worker */
	int want_caps, want_rlimits, want_landlock, want_seccomp, want_threads;
	int in_fd, out_fd; /* the protocol, moved off fds 0 and 1; -1 if not */
	int lanes;         /* call lanes kept at fds 3 … 3+2*lanes-1 */
	int caps_empty;    /* effective, permitted, inheritable, ambient and bounding sets empty */
	int bounding_left; /* capabilities left in the bounding set */
	int uid;           /* effective uid after dropping */
	int rlimits;
	int max_threads; /* RLIMIT_NPROC set; 0: none */
	int landlock_abi; /* 0: no Landlock */
	int landlock_errno;
	int landlock_fs, landlock_net, landlock_scoped;
	char errors[512];
	/* When the constructor began and ended: CLOCK_MONOTONIC (shared by
	   every process of the host) and this process's CPU time, in ns
	   (startstamps.go). */
	long long mono_begin, mono_end, cpu_begin, cpu_end;
};

/* CLOCK_MONOTONIC in ns, through the vDSO (no system call: callable under
   the seccomp filter). */
long long isogate_mono_ns(void);
/* This process's CPU time in ns (a system call: before seccomp only). */
long long isogate_cpu_ns(void);

extern struct isogate_confine_report isogate_confine;

/* confine_entropy_linux.cc: V8 seeds its random number generators from
   getrandom(2) instead of opening /dev/urandom. */
void isogate_set_entropy_source(void);
