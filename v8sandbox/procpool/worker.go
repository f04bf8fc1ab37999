package procpool

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// WorkerCommand is the hidden subcommand that runs a sandbox worker.
const WorkerCommand = "sandbox-worker"

// workerDispatch records that this binary turns into a worker when started
// with WorkerCommand (see [RunWorkerIfRequested]).
var workerDispatch atomic.Bool

// inTestBinary reports whether this process is a `go test` binary, where
// the default Command would start the test suite again rather than a
// worker. Every test binary has the -test.* flags: its generated main
// registers them (testing.Init) before TestMain and the tests run. Asking
// the flag package instead of testing.Testing keeps package testing out of
// the binaries that import procpool.
func inTestBinary() bool { return flag.Lookup("test.v") != nil }

// RunWorkerIfRequested turns the process into a sandbox worker, and never
// returns, when it was started as one (os.Args[1] == "sandbox-worker").
//
// The isogate binary does this through its hidden command. A test binary
// whose tests create pools with the default Command (this very binary)
// must call it first thing in TestMain:
//
//	func TestMain(m *testing.M) {
//		procpool.RunWorkerIfRequested()
//		os.Exit(m.Run())
//	}
//
// Without it, [New] refuses the default Command in a test binary: the
// "worker" would run the test suite again instead.
func RunWorkerIfRequested() {
	if len(os.Args) > 1 && os.Args[1] == WorkerCommand {
		exitWorker(WorkerMain(context.Background()))
	}
	workerDispatch.Store(true)
}

// WorkerMain is the whole life of a sandbox worker process: it hardens the
// process, then serves the protocol on the pipes it got as stdin and stdout
// until the parent closes them. It returns the process exit code.
//
// It is meant for `isogate sandbox-worker` (and a test binary's TestMain),
// never to be run by hand: it refuses a terminal on stdin.
//
// Confinement (see the package documentation) happens before the Go
// runtime starts, in an ELF constructor, except the seccomp filter, which
// is installed here for every thread before any program runs. Hardening,
// all cheap and best effort:
//   - SIGINT and SIGHUP are ignored: only the parent decides when a worker
//     ends (closing its stdin, or SIGKILL);
//   - the environment is cleared, the working directory is /;
//   - file descriptors inherited without close-on-exec are closed;
//   - the protocol moves to private descriptors; fd 0 becomes /dev/null and
//     fd 1 a copy of stderr, so stray writes to stdout (from V8 or Go) can
//     never corrupt the protocol;
//   - no core dumps, no new privileges, and an OOM score of 1000 so the
//     kernel's OOM killer picks a worker before the gateway.
func WorkerMain(ctx context.Context) int {
	st := &stamps{list: earlyStamps()} // startstamps.go
	st.add(phaseGoMain, true)
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// (A worker's constructor has moved the protocol off fd 0 already, after
	// making the same check.)
	if !isWorker() && isTerminal(os.Stdin) {
		fmt.Fprintf(os.Stderr, "isogate %s is internal: it is started by isogate itself and speaks a binary protocol on stdin/stdout\n", WorkerCommand)
		return 2
	}
	in, out, err := hardenProcess()
	if err != nil {
		fmt.Fprintf(os.Stderr, "sandbox worker: hardening failed: %v\n", err)
		return 1
	}
	// A test binary's workers die on a system call missing from the
	// seccomp allowlist, so that the miss is loud; released binaries
	// answer EPERM (see seccomp_linux.go).
	lanes := workerLanes() // before seccomp: it sets up their polling
	st.add(phaseHardened, true)
	facts := confineWorker(inTestBinary())
	st.add(phaseSeccomp, facts == nil || !facts.Seccomp) // the filter refuses the CPU clock
	if err := serve(ctx, in, out, logger, facts, lanes, st); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox worker: %v\n", err)
		return 1
	}
	return 0
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
