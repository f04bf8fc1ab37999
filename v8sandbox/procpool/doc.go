// Package procpool runs sandbox jobs in supervised worker processes, so that
// a script V8 cannot stop, or one that makes V8 abort, costs one worker
// process instead of the whole gateway.
//
// In-process guards (package v8sandbox) are not enough on their own:
// "x".repeat(2**27).split("") aborts the process ("Fatal JavaScript invalid
// size error") even inside try/catch, and builtins such as
// Array.from({length: 2**27}), new Array(2**27).fill(0) or a huge JSON.parse
// ignore TerminateExecution for seconds while they allocate gigabytes.
//
// # Processes
//
// A [Pool] starts Options.Workers processes of the same binary with the hidden
// subcommand `sandbox-worker` ([WorkerMain], which calls [Serve]). Each hosts
// an in-process v8sandbox.Pool of Options.SlotsPerWorker pinned V8 threads and
// serves that many runs at once. [Pool] implements v8sandbox.Runner, so it
// replaces a v8sandbox.Pool without changing callers.
//
// A process serves the runs of one principal (v8sandbox.Job.Principal) for
// its life: a run of another principal gets a fresh process, started in
// place of one retired for it (principals.go). A pool whose runs all have
// the same principal never retires a process for that.
//
// A pool with [Options].Checker is a pool of checker workers: the same
// subcommand, told in its init frame to start the [CheckServer] the binary
// registered ([RegisterChecker]; internal/typecheck/checkworker's loads the
// TypeScript compiler) before ready and to answer each run with it instead
// of running JavaScript (checks.go). Confinement, supervision, deadlines
// and deaths are those of any worker.
//
// # Protocol
//
// The parent speaks to a worker over the child's stdin and stdout: frames of
// a 4-byte big-endian length and one JSON message, at most [MaxFrameBytes].
//
//	parent → worker   init {version, slots}         first frame
//	worker → parent   ready {version, pid, confine} V8 is up; confinement obtained
//	parent → worker   run {id, job}                 a v8sandbox.Job, limits filled in
//	parent → worker   cancel {id}                   the caller gave up
//	worker → parent   call {id, call, name, args}   a v8sandbox.HostCall of run id
//	parent → worker   reply {id, call, value | error | fatal}   its v8sandbox.HostReply
//	worker → parent   result {id, result | err}     err is a *v8sandbox.Error
//	parent → worker   taken {id}                    the caller has the result
//
// A worker prepares the slot's next context (a fresh V8 context with the
// bootstrap and prelude run, ~0.5–1 ms of CPU) only after taken: preparing
// while the result travels delays the parent's wake-up on a busy machine.
//
// The call and reply frames are built by hand around the JSON they carry
// (arguments the bootstrap serialized, a value v8sandbox.Dispatch checked):
// encoding/json would scan and copy it once more, ~7 ms per MB. A worker
// reads a value reply by hand too (the parent is trusted and V8 parses the
// value next), and the run and taken frames, which the parent writes by
// hand as well (encodeRun and takenFrame write byte for byte what
// encodeFrame would; decodeRun and decodeTaken read exactly that, anything
// else goes through encoding/json, whose reflection took ~18 µs per run
// frame). The parent
// reads call and result frames by hand, checking the JSON they carry, and
// every other frame through encoding/json.
//
// A worker runs a job on the goroutine that read its run frame (the thread
// the kernel woke for it), after handing the reading on to a new
// goroutine. Host calls travel on call lanes (lanes.go): pipe pairs
// outside Go's poller on both sides, polled briefly after each call and
// reply and slept on in epoll_pwait otherwise; in the parent each idle
// lane holds a thread asleep (2 × SlotsPerWorker lanes per worker, at most
// 16).
//
// Host functions (tool calls) are executed by the parent, which owns the
// backends: the worker's v8sandbox.Host forwards each call and, for a sync
// function, blocks that V8 thread until the reply comes. A reply's fatal
// error ends the run with that error (for example OUTPUT_LIMIT), an ordinary
// error is thrown into the script, as in-process.
//
// A malformed frame (bad length, not JSON, unknown type, missing fields) or
// an oversized one from a worker is a protocol violation: the parent kills
// that worker; its runs end with SANDBOX_CRASHED. The parent never trusts a
// worker's output beyond typing it.
//
// # Deadlines, cancellation, deaths
//
// The worker enforces a job's limits itself (v8sandbox). The parent adds a
// hard deadline: a run not answered by its Timeout + Options.Grace has its
// worker SIGKILLed and ends with TIMEOUT. When the caller's context ends the
// parent sends cancel; a worker that has not answered within Grace is killed
// too (CANCELLED, or TIMEOUT for a context deadline).
//
// A worker that dies fails every run it had:
//   - HEAP_LIMIT when the death was memory exhaustion: V8's fatal OOM texts on
//     its stderr ("Fatal JavaScript out of memory", "invalid size error",
//     "Reached heap limit", "Fatal process out of memory"…), Go's "out of
//     memory", a kill by the kernel's OOM killer (SIGKILL while the cgroup v2
//     oom_kill counter grew; cgroup v1 hosts cannot tell, so such a kill reads
//     as SANDBOX_CRASHED), or the parent's hard RSS limit (Options.KillRSSMB);
//   - SANDBOX_CRASHED otherwise (signals, exits, external kills, protocol
//     violations, and the neighbours of a run killed for its deadline).
//
// A process death cannot be pinned on one of its runs, so every run on the
// dying worker gets the same error: with SlotsPerWorker > 1 one killer script
// also ends up to SlotsPerWorker-1 neighbours (never runs on other workers).
// SlotsPerWorker = 1 gives each run a process of its own, at ~20 MB of RSS
// per idle worker.
//
// A dead or killed worker is replaced at once. A slot whose processes fail to
// start, or die on their own while idle, backs off exponentially (100 ms
// doubling up to 5 s); when every slot is failing, Run fails fast with
// SANDBOX_CRASHED instead of waiting.
//
// Memory: the parent samples each worker's RSS (/proc/PID/statm) every
// 100 ms, never on a run's path. A worker over Options.MaxRSSMB is recycled between
// runs (no new runs, current ones finish, then it exits and is replaced);
// one over Options.KillRSSMB is killed even mid-run.
//
// Worker stderr (V8 fatal messages, Go crash dumps) goes to the parent's
// logger, at most 100 lines of 512 bytes per process; the rest is counted.
// It never reaches the parent's stdout.
//
// # What a worker can reach
//
// A worker can reach: its protocol pipes (only jobs and host-call replies
// come in; only results and host-call requests go out); its stderr pipe to
// the parent's logger; the CPU and memory of its own process.
//
// Every worker starts with an empty environment, closed inherited
// descriptors (fd 0 is /dev/null, fd 1 a copy of stderr, the protocol on
// private descriptors; only the call lanes' pipes, fds 3 to 3+2×lanes-1,
// are kept, see lanes.go), a session of its own (terminal signals reach only
// the parent; it ignores SIGINT and SIGHUP), no_new_privs, no core dumps,
// OOM score 1000, and the kernel SIGKILLs it when its parent dies
// (Pdeathsig, armed from a thread that lives as long as the pool). Tools,
// credentials and network connections live in the parent; a script reaches
// them only through the job's declared host functions.
//
// # Confinement
//
// An empty environment is not enough against native code (a V8 exploit):
// the gateway's secrets are one /proc/<pid>/environ read away. So a worker
// is confined in layers before it runs any program ([Options].Confinement:
// best-effort by default, strict refuses a worker that lacks a layer, off):
//   - namespaces at spawn (user, net, mount, pid, ipc; uid/gid 65534
//     inside), falling back to fewer, then none, when the host refuses
//     (sys_linux.go, nsLevels);
//   - no capabilities in any set (bounding included, via an ambient
//     CAP_SETPCAP dropped at once), securebits locked, uid 65534 under a
//     root gateway; rlimits (no file growth, 64 descriptors, no locked
//     memory); Landlock with no filesystem access but reading /dev/urandom,
//     no TCP bind/connect (ABI 4+), signals and abstract sockets scoped
//     (ABI 6+); at most 256 threads (RLIMIT_NPROC, where the worker has a
//     user namespace of its own mapped to a non-root host uid: confine.go,
//     threadBound). These are per thread, so confine_linux.c applies them
//     in an ELF constructor, before the Go runtime and V8 start any thread;
//   - a pids cgroup of its own with pids.max 256, where the host delegates
//     one (cgroup v1 pids, or v2 with pids in the gateway's
//     cgroup.subtree_control), joined while the worker starts up (its own
//     start-up code only), before the handshake ends and so before any
//     run, and removed when the worker is reaped
//     (pidscgroup_linux.go): the thread bound where RLIMIT_NPROC cannot be;
//   - a seccomp allowlist derived from traces of the whole sandbox test
//     corpus, installed with TSYNC on every thread (seccomp_linux.go):
//     signals only within the worker's own thread group, every path call
//     refused before lookup (no file-existence oracle; V8 seeds through
//     getrandom, confine_entropy_linux.cc); violations fail with EPERM, or
//     kill the worker in test binaries.
//
// A root gateway also makes itself non-dumpable. The level each layer
// reached is logged at start and returned by [Pool.Confinement].
// TestEscapeDrill builds a worker with the escapedrill tag (never in a
// release binary) that executes an attacker's actions natively and checks
// every one is denied.
//
// JavaScript in a worker sees only ECMAScript built-ins and the job's host
// functions (v8sandbox's deny-by-default context): no files, network,
// processes, timers or WebAssembly.
package procpool
