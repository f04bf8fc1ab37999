package procpool

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isogate/isogate/v8sandbox"
)

// TestMain doubles the test binary as the processes the tests need:
//
//	sandbox-worker  the real worker (plus a hook for deliberately broken frames)
//	flaky-worker    completes the handshake, then dies 30 ms later
//	pool-parent     a gateway stand-in: starts a pool, reports on stdout, waits to be killed
//
// Serving sandbox-worker makes this binary a valid default Command, which
// the examples use; RunWorkerIfRequested says so (it does not return when
// it dispatches, so the switch goes first to install the test hook).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case WorkerCommand:
			testHookRun = brokenWorkerHook
			code := WorkerMain(context.Background())
			// Exit without the race detector's one-second exit sleep (which
			// only runs for exit code 0); races in a worker are still printed
			// to its stderr when they happen, and quietLogger fails the test
			// on them.
			syscall.Exit(code)
		case "flaky-worker":
			flakyWorker()
		case "pool-parent":
			poolParent()
		case "secret-holder":
			select {} // a backend stand-in with a secret in its environment, until killed
		}
	}
	RunWorkerIfRequested()
	code := m.Run()
	removeBuiltIsogates()
	os.Exit(code)
}

// brokenWorkerHook makes a worker misbehave on demand: a job whose source
// starts with "//broken:" gets raw bytes instead of a result.
func brokenWorkerHook(job *v8sandbox.Job) []byte {
	kind, ok := strings.CutPrefix(job.Source, "//broken:")
	if !ok {
		return nil
	}
	frame := func(body string) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		return append(b, body...)
	}
	switch strings.TrimSpace(kind) {
	case "oversized":
		return binary.BigEndian.AppendUint32(nil, 0x7fffffff)
	case "not-json":
		return frame("{this is not json")
	case "unknown-type":
		return frame(`{"type":"launch-missiles"}`)
	case "empty-result":
		return frame(`{"type":"result","id":1}`)
	}
	panic(fmt.Sprintf("unknown broken kind %q", kind))
}

func flakyWorker() {
	if _, err := newFrameReader(os.Stdin).read(); err != nil {
		os.Exit(1)
	}
	f, _ := encodeFrame(&message{Type: msgReady, Version: protocolVersion, PID: os.Getpid()})
	os.Stdout.Write(f)
	time.Sleep(30 * time.Millisecond)
	syscall.Exit(3)
}

// parentReport is what pool-parent prints on its stdout.
type parentReport struct {
	Code string `json:"code"`
	PIDs []int  `json:"pids"`
}

func poolParent() {
	exe, _ := os.Executable()
	p, err := New(Options{Command: []string{exe, WorkerCommand}, Workers: 2,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		syscall.Exit(1)
	}
	// A worker crash dump must reach stderr (through the logger), never stdout.
	_, err = p.Run(context.Background(), v8sandbox.Job{Source: `'x'.repeat(2**27).split('')`}, nil)
	// Wait for the replacement so both PIDs are live ones.
	if !awaitState(p, 20*time.Second, func() bool { return len(p.Stats().Workers) == 2 }) {
		fmt.Fprintln(os.Stderr, "pool-parent: no replacement worker within 20 s")
		syscall.Exit(1)
	}
	rep := parentReport{Code: string(cmp.Or(v8sandbox.CodeOf(err), v8sandbox.CodeInternal))}
	for _, w := range p.Stats().Workers {
		rep.PIDs = append(rep.PIDs, w.PID)
	}
	json.NewEncoder(os.Stdout).Encode(rep)
	select {} // until killed
}
