//go:build linux

// The early half of a sandbox worker's confinement. It runs as an ELF
// constructor, before the Go runtime and V8 start any thread: capabilities
// and Landlock domains are per thread and only inherited by threads created
// later, so this is the one point where setting them once covers every
// thread (Go's, V8's platform workers, the pinned isolate threads). The same
// pattern as runc's nsenter. See confine_linux.go for the report it leaves.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "confine_linux.h"

struct isogate_confine_report isogate_confine;

// Landlock's uapi, spelled out so that older system headers build it.
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_ABI1 ((1ULL << 13) - 1) /* execute … make_sym */
#define LL_FS_REFER (1ULL << 13)      /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)   /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)  /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)   /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT (1 << 0)
#define SECBIT_NOROOT_LOCKED (1 << 1)
#define SECBIT_NO_SETUID_FIXUP_LOCKED (1 << 3)
#define SECBIT_KEEP_CAPS_LOCKED (1 << 5)
#endif
#ifndef SECBIT_NO_CAP_AMBIENT_RAISE
#define SECBIT_NO_CAP_AMBIENT_RAISE (1 << 6)
#define SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED (1 << 7)
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

static long long ns_of(clockid_t clock) {
	struct timespec ts;
	if (clock_gettime(clock, &ts) != 0) {
		return -1;
	}
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

long long isogate_mono_ns(void) { return ns_of(CLOCK_MONOTONIC); }

long long isogate_cpu_ns(void) { return ns_of(CLOCK_PROCESS_CPUTIME_ID); }

static void note(const char *what, int err) {
	size_t n = strlen(isogate_confine.errors);
	if (n + 80 >= sizeof isogate_confine.errors) {
		return;
	}
	snprintf(isogate_confine.errors + n, sizeof isogate_confine.errors - n, "%s%s: %s", n ? "; " : "", what, strerror(err));
}

static int has_cap(int cap) {
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	if (syscall(SYS_capget, &hdr, data) != 0) {
		return 0;
	}
	return (data[cap / 32].effective >> (cap % 32)) & 1;
}

// Layer 4: no capabilities in any set, and not root. A worker in its user
// namespace arrives as uid 65534 there holding only CAP_SETPCAP (passed as
// an ambient capability to empty the bounding set here); one started by a
// root gateway without a user namespace arrives as root with every
// capability and becomes nobody.
static void drop_capabilities(void) {
	int setpcap = has_cap(CAP_SETPCAP);
	if (setpcap) {
		for (int c = 0; c < 64; c++) {
			if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) < 0) {
				break; // past cap_last_cap
			}
			if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0) {
				note("dropping the capability bounding set", errno);
				break;
			}
		}
		// Root inside the namespace (or outside) means nothing any more,
		// and nothing can bring capabilities back.
		if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP_LOCKED |
		                                 SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
		                                 SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
		          0, 0, 0) != 0) {
			note("locking the securebits", errno);
		}
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (geteuid() == 0 && has_cap(CAP_SETUID)) {
		gid_t none[1];
		if (setgroups(0, none) != 0) {
			note("clearing the supplementary groups", errno);
		}
		if (syscall(SYS_setresgid, ISOGATE_WORKER_ID, ISOGATE_WORKER_ID, ISOGATE_WORKER_ID) != 0) {
			note("setresgid", errno);
		}
		if (syscall(SYS_setresuid, ISOGATE_WORKER_ID, ISOGATE_WORKER_ID, ISOGATE_WORKER_ID) != 0) {
			note("setresuid", errno);
		}
	}
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	memset(data, 0, sizeof data);
	if (syscall(SYS_capset, &hdr, data) != 0) {
		note("clearing the capability sets", errno);
	}

	// What was obtained.
	memset(data, 0, sizeof data);
	int empty = syscall(SYS_capget, &hdr, data) == 0;
	for (int i = 0; i < 2; i++) {
		if (data[i].effective || data[i].permitted || data[i].inheritable) {
			empty = 0;
		}
	}
	int bounding = 0;
	for (int c = 0; c < 64; c++) {
		int r = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
		if (r < 0) {
			break;
		}
		bounding += r;
	}
	isogate_confine.caps_empty = empty && bounding == 0 && prctl(PR_CAP_AMBIENT, 1 /* IS_SET */, CAP_SETPCAP, 0, 0) <= 0;
	isogate_confine.bounding_left = bounding;
	isogate_confine.uid = (int)geteuid();
}

// Layer 5: rlimits that suit V8 (no address-space limit: it reserves large
// virtual ranges). No file can grow, few descriptors, nothing to lock.
static void set_rlimits(void) {
	struct rlimit zero = {0, 0};
	struct rlimit fds = {ISOGATE_WORKER_NOFILE, ISOGATE_WORKER_NOFILE};
	int ok = setrlimit(RLIMIT_FSIZE, &zero) == 0;
	ok &= setrlimit(RLIMIT_NOFILE, &fds) == 0;
	ok &= setrlimit(RLIMIT_MEMLOCK, &zero) == 0;
	ok &= setrlimit(RLIMIT_MSGQUEUE, &zero) == 0;
	ok &= setrlimit(RLIMIT_LOCKS, &zero) == 0;
	if (!ok) {
		note("setting rlimits", errno);
	}
	isogate_confine.rlimits = ok;
}

// Layer 6: a bound on threads and processes. Set only when the parent
// spawned this worker in a user namespace of its own, mapped to a uid other
// than the host's root (confine.go, threadBound): the kernel then counts
// this worker's own tasks, threads included, against it.
static void set_thread_bound(void) {
	struct rlimit n = {ISOGATE_WORKER_NPROC, ISOGATE_WORKER_NPROC};
	if (setrlimit(RLIMIT_NPROC, &n) != 0) {
		note("setting RLIMIT_NPROC", errno);
		return;
	}
	isogate_confine.max_threads = ISOGATE_WORKER_NPROC;
}

// Layer 2: Landlock. Every filesystem right the ABI knows is handled and
// none is granted, except reading /dev/urandom (V8 seeds its random number
// generators from it; a character device with no data to steal). TCP bind
// and connect are handled too where the ABI has them (4+), and signals and
// abstract unix sockets are scoped to the worker itself where it has scopes
// (6+).
static void apply_landlock(void) {
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	if (abi < 0) {
		isogate_confine.landlock_errno = errno;
		return;
	}
	isogate_confine.landlock_abi = (int)abi;
	struct ll_ruleset_attr attr = {0};
	attr.handled_access_fs = LL_FS_ABI1;
	if (abi >= 2) {
		attr.handled_access_fs |= LL_FS_REFER;
	}
	if (abi >= 3) {
		attr.handled_access_fs |= LL_FS_TRUNCATE;
	}
	if (abi >= 5) {
		attr.handled_access_fs |= LL_FS_IOCTL_DEV;
	}
	size_t size = 8;
	if (abi >= 4) {
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		size = 16;
	}
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		size = 24;
	}
	int rs = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0) {
		isogate_confine.landlock_errno = errno;
		note("creating the Landlock ruleset", errno);
		return;
	}
	int urandom = open("/dev/urandom", O_PATH | O_CLOEXEC);
	if (urandom >= 0) {
		struct ll_path_beneath_attr rule = {LL_FS_READ_FILE, urandom};
		if (syscall(__NR_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &rule, 0) != 0) {
			note("allowing /dev/urandom", errno);
		}
		close(urandom);
	}
	if (syscall(__NR_landlock_restrict_self, rs, 0) != 0) {
		isogate_confine.landlock_errno = errno;
		note("enforcing the Landlock ruleset", errno);
		close(rs);
		return;
	}
	close(rs);
	isogate_confine.landlock_fs = 1;
	isogate_confine.landlock_net = abi >= 4;
	isogate_confine.landlock_scoped = abi >= 6;
}

// The process-wide hardening every worker gets, confined or not: no core
// dumps, no new privileges, first choice of the OOM killer, no inherited
// descriptors, and the protocol moved off fds 0 and 1.
static void harden(void) {
	struct rlimit zero = {0, 0};
	setrlimit(RLIMIT_CORE, &zero);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1000", 4) != 4) {
			note("raising oom_score_adj", errno);
		}
		close(fd);
	}
	if (chdir("/") != 0) {
		note("chdir /", errno);
	}
	// Everything above fd 2 was inherited (this process has opened nothing
	// of its own yet): a parent-side library that forgot O_CLOEXEC must not
	// leak a file, socket or pipe into the sandbox. The call lanes the
	// parent passed on purpose (fds 3 … 3+2*lanes-1) are kept, close-on-exec.
	int first = 3 + 2 * isogate_confine.lanes;
	for (int i = 3; i < first; i++) {
		fcntl(i, F_SETFD, FD_CLOEXEC);
	}
	if (syscall(SYS_close_range, first, ~0U, 0) != 0) {
		for (int i = first; i < 1024; i++) {
			close(i);
		}
	}
	int in = fcntl(0, F_DUPFD_CLOEXEC, 3);
	int out = fcntl(1, F_DUPFD_CLOEXEC, 3);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in < 0 || out < 0 || null < 0 || dup3(null, 0, 0) < 0 || dup3(2, 1, 0) < 0) {
		note("moving the protocol descriptors", errno);
		return;
	}
	close(null);
	isogate_confine.in_fd = in;
	isogate_confine.out_fd = out;
}

// Arguments: argv[1] is the worker command, an argument "confine=L1,L2…"
// names the layers to apply here (caps, rlimits, threads, landlock; seccomp
// is Go's).
__attribute__((constructor)) static void isogate_confine_early(int argc, char **argv, char **envp) {
	(void)envp;
	long long mono = isogate_mono_ns(), cpu = isogate_cpu_ns();
	isogate_confine.in_fd = -1;
	isogate_confine.out_fd = -1;
	if (argc < 2 || argv == NULL || strcmp(argv[1], ISOGATE_WORKER_COMMAND) != 0) {
		return;
	}
	// Started by hand (a terminal, or any character device, on stdin):
	// leave it alone, WorkerMain refuses to serve.
	struct stat st;
	if (fstat(0, &st) == 0 && S_ISCHR(st.st_mode)) {
		return;
	}
	isogate_confine.worker = 1;
	isogate_confine.mono_begin = mono;
	isogate_confine.cpu_begin = cpu;
	for (int i = 2; i < argc; i++) {
		if (strncmp(argv[i], "confine=", 8) == 0) {
			const char *l = argv[i] + 8;
			isogate_confine.want_caps = strstr(l, "caps") != NULL;
			isogate_confine.want_rlimits = strstr(l, "rlimits") != NULL;
			isogate_confine.want_landlock = strstr(l, "landlock") != NULL;
			isogate_confine.want_seccomp = strstr(l, "seccomp") != NULL;
			isogate_confine.want_threads = strstr(l, "threads") != NULL;
		} else if (strncmp(argv[i], "lanes=", 6) == 0) {
			int n = atoi(argv[i] + 6);
			isogate_confine.lanes = n > 0 && n <= ISOGATE_MAX_LANES ? n : 0;
		}
	}
	harden();
	if (isogate_confine.want_caps) {
		drop_capabilities();
	}
	// Neither siblings (same uid) nor anyone without CAP_SYS_PTRACE may
	// read this process's memory or /proc files.
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (isogate_confine.want_rlimits) {
		set_rlimits();
	}
	if (isogate_confine.want_threads) {
		set_thread_bound();
	}
	if (isogate_confine.want_landlock) {
		apply_landlock();
	}
	isogate_confine.mono_end = isogate_mono_ns();
	isogate_confine.cpu_end = isogate_cpu_ns();
}
