package procpool

/*
#include "confine_linux.h"
*/
import "C"

import (
	"os"
	"syscall"
)

// Constants shared with confine_linux.c.
const (
	// workerID is the uid and gid of a confined worker: 65534, nobody.
	workerID = C.ISOGATE_WORKER_ID
	// workerNoFile is a confined worker's descriptor limit.
	workerNoFile = C.ISOGATE_WORKER_NOFILE
	// workerMaxThreads bounds a worker's threads and processes: its
	// RLIMIT_NPROC (confine_linux.c) and its pids cgroup's pids.max
	// (pidscgroup_linux.go).
	workerMaxThreads = C.ISOGATE_WORKER_NPROC
)

// earlyProtocol returns the protocol streams that the constructor moved off
// fds 0 and 1; ok is false when this process did not start as a worker.
func earlyProtocol() (in, out *os.File, ok bool) {
	if C.isogate_confine.worker == 0 || C.isogate_confine.in_fd < 0 {
		return nil, nil, false
	}
	return protocolFile(int(C.isogate_confine.in_fd), "protocol-in"), protocolFile(int(C.isogate_confine.out_fd), "protocol-out"), true
}

// earlyFacts reports what the constructor obtained, and which layers the
// worker was asked for.
func earlyFacts() (want layerSet, f workerFacts) {
	r := &C.isogate_confine
	want = layerSet{caps: r.want_caps != 0, rlimits: r.want_rlimits != 0, landlock: r.want_landlock != 0, seccomp: r.want_seccomp != 0,
		threads: r.want_threads != 0}
	f = workerFacts{
		CapsEmpty:    r.caps_empty != 0,
		BoundingLeft: int(r.bounding_left),
		UID:          int(r.uid),
		Rlimits:      r.rlimits != 0,
		MaxThreads:   int(r.max_threads),
		LandlockABI:  int(r.landlock_abi),
		LandlockFS:   r.landlock_fs != 0,
		LandlockNet:  r.landlock_net != 0,
		LandlockScop: r.landlock_scoped != 0,
		Errors:       C.GoString(&r.errors[0]),
	}
	if r.landlock_errno != 0 {
		f.LandlockErr = syscall.Errno(r.landlock_errno).Error()
	}
	return want, f
}

// setEntropySource makes V8 seed every isolate created from now on through
// getrandom(2) rather than by opening /dev/urandom, which a confined worker
// cannot (seccomp refuses every openat).
func setEntropySource() { C.isogate_set_entropy_source() }

// isWorker reports whether this process started as a sandbox worker.
func isWorker() bool { return C.isogate_confine.worker != 0 }

// monoNow is CLOCK_MONOTONIC in ns (through the vDSO: allowed under seccomp).
func monoNow() int64 { return int64(C.isogate_mono_ns()) }

// cpuNow is this process's CPU time in ns; a system call that the seccomp
// filter refuses: call it only before the filter is installed.
func cpuNow() int64 { return int64(C.isogate_cpu_ns()) }

// earlyStamps are the constructor's stamps (startstamps.go); none when the
// process did not start as a worker.
func earlyStamps() []stamp {
	r := &C.isogate_confine
	if r.worker == 0 || r.mono_begin == 0 {
		return nil
	}
	return []stamp{{Phase: phaseConstructor, Mono: int64(r.mono_begin), CPU: int64(r.cpu_begin)},
		{Phase: phaseConfined, Mono: int64(r.mono_end), CPU: int64(r.cpu_end)}}
}
