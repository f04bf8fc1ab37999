package procpool

import (
	"slices"
	"time"
)

// A worker's start, phase by phase. The worker stamps each phase of its
// start with CLOCK_MONOTONIC, which every process of the host shares, and,
// where it can read it (before its seccomp filter, which refuses the
// system call), with its own CPU time; it sends the stamps in its ready
// frame. The parent stamps its own side (the spawn, the pids cgroup, the
// init frame, the ready frame's arrival) on the same clock, so that one
// timeline holds both processes. Reading the clock goes through the vDSO:
// a few tens of nanoseconds per stamp, no system call.

// StartPhase is one step of a worker's start ([WorkerStats].Start).
type StartPhase struct {
	// Name says what had just been done.
	Name string
	// At is when, from the moment the parent began to spawn the worker.
	At time.Duration
	// CPU is the worker process's CPU time at that moment (all its
	// threads); -1 where it cannot be read: on the parent's side, and in
	// the worker once its seccomp filter is in force.
	CPU time.Duration
	// Parent is true for a step taken by the parent process.
	Parent bool
}

// The phases of a worker's start, in the order they happen in each
// process.
const (
	phaseSpawn       = "parent: spawn begins (fork, uid/gid maps, exec)"
	phaseExeced      = "parent: exec done (os/exec Start returned)"
	phaseCgroup      = "parent: pids cgroup created and joined"
	phaseInitSent    = "parent: init frame and V8 snapshot written"
	phaseReady       = "parent: ready frame read"
	phaseConstructor = "worker: ELF constructor entered (exec and dynamic loading done)"
	phaseConfined    = "worker: capabilities, rlimits, Landlock applied (constructor done)"
	phaseGoMain      = "worker: Go runtime and package initialisation done (WorkerMain)"
	phaseHardened    = "worker: descriptors and call lanes set up"
	phaseSeccomp     = "worker: seccomp filter installed"
	phaseInitRead    = "worker: init frame and V8 snapshot read"
	phaseV8Platform  = "worker: V8 platform initialised"
	phaseSnapshot    = "worker: V8 startup snapshot taken"
	phaseWarm        = "worker: first isolate and context prepared"
	phaseReadySent   = "worker: ready frame built"
)

// stamp is one phase as it crosses the protocol: CLOCK_MONOTONIC and
// the worker's CPU time in ns (-1: unknown).
type stamp struct {
	Phase string `json:"p"`
	Mono  int64  `json:"m"`
	CPU   int64  `json:"c"`
}

// stamps collects the phases of one process's part of a start.
type stamps struct{ list []stamp }

// add stamps phase now; withCPU reads the process's CPU time too, which
// only a worker without its seccomp filter may.
func (s *stamps) add(phase string, withCPU bool) {
	if s == nil {
		return
	}
	cpu := int64(-1)
	if withCPU {
		cpu = cpuNow()
	}
	s.list = append(s.list, stamp{Phase: phase, Mono: monoNow(), CPU: cpu})
}

// timeline merges the parent's stamps and the worker's into phases
// measured from the parent's first stamp, in the order they happened.
func timeline(parent, worker []stamp) []StartPhase {
	if len(parent) == 0 {
		return nil
	}
	t0 := parent[0].Mono
	out := make([]StartPhase, 0, len(parent)+len(worker))
	for _, s := range parent {
		out = append(out, StartPhase{Name: s.Phase, At: time.Duration(s.Mono - t0), CPU: -1, Parent: true})
	}
	for _, s := range worker {
		cpu := time.Duration(-1)
		if s.CPU >= 0 {
			cpu = time.Duration(s.CPU)
		}
		out = append(out, StartPhase{Name: s.Phase, At: time.Duration(s.Mono - t0), CPU: cpu})
	}
	slices.SortStableFunc(out, func(a, b StartPhase) int { return int(a.At - b.At) })
	return out
}
