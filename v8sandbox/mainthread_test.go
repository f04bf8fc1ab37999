package v8sandbox

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"testing"
)

// fromMain is what a run started by TestMain, on the main goroutine (locked
// to the main thread by mainthread.go), observed.
var fromMain struct {
	callerOnMain bool // TestMain itself ran on the main thread
	hostOnMain   bool // the run's sync host function ran on the main thread
	err          error
}

func TestMain(m *testing.M) {
	takeChildSnapshot() // before any isolate
	fromMain.callerOnMain = onMainThread()
	pool := NewPool(Options{Workers: 1})
	job := Job{Source: `probe()`, Functions: []Function{{Name: "probe"}}, AwaitResult: true}
	_, fromMain.err = pool.Run(context.Background(), job, HostFunc(
		func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
			fromMain.hostOnMain = onMainThread() // sync: called on the thread running the script
			return nil, nil
		}))
	pool.Close()
	os.Exit(m.Run())
}

// A command's main that calls Pool.Run must not run V8 on the main thread,
// where every V8 call pays a stack-bounds lookup of ~100 µs.
func TestRunStartedOnTheMainThreadLeavesIt(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the main thread is recognised on Linux only")
	}
	if !fromMain.callerOnMain {
		t.Fatal("TestMain did not run on the main thread: this test proves nothing")
	}
	if fromMain.err != nil {
		t.Fatal(fromMain.err)
	}
	if fromMain.hostOnMain {
		t.Fatal("the script ran on the main thread")
	}
}
