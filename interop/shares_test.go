package interop

import (
	"strings"
	"syscall"
	"testing"
)

// sharesReport is the report of scripts/fair_shares.mjs.
type sharesReport struct {
	Queued bool
	Alice  struct {
		IsError bool
		Text    string
		Error   any
	}
	AliceMs int64
	// BusyEndedFirst counts bob's busy loops that ended before alice's
	// program answered.
	BusyEndedFirst int
	BobNext        struct {
		IsError bool
		Text    string
		Error   any
	}
}

// TestTypeScriptSDKFairShares: with server.auth.mode token and two
// principals, bob's busy loops hold his share of the V8 slots (one runs,
// one waits); the official TypeScript SDK client, as alice, runs a trivial
// program at once, and bob's next run is refused with PRINCIPAL_BUSY.
func TestTypeScriptSDKFairShares(t *testing.T) {
	t.Parallel()
	gw := startHTTPEnv("ISOGATE_SERVER__AUTH__MODE=token",
		"ISOGATE_SERVER__AUTH__TOKENS__ALICE__TOKEN=alice-interop-token",
		"ISOGATE_SERVER__AUTH__TOKENS__BOB__TOKEN=bob-interop-token",
		"ISOGATE_SANDBOX__MAX_CONCURRENT=2", "ISOGATE_SANDBOX__MAX_CONCURRENT_PER_PRINCIPAL=1",
		"ISOGATE_SANDBOX__TIMEOUT=10m") // bob's loops end with the script, not before alice's answer
	t.Cleanup(func() {
		if gw.cmd != nil && gw.cmd.Process != nil {
			_ = gw.cmd.Process.Signal(syscall.SIGKILL)
			_ = gw.cmd.Wait()
		}
	})
	if gw.err != nil {
		t.Fatalf("HTTP gateway: %v\n%s", gw.err, gw.logs)
	}
	var r sharesReport
	runNodeInto(t, &r, "fair_shares.mjs", "--http", gw.url, "--token", "bob-interop-token",
		"--alice", "alice-interop-token", "--metrics", strings.TrimSuffix(gw.url, "/mcp")+"/metrics")
	if !r.Queued {
		t.Error("bob's second busy loop never queued behind his share")
	}
	if r.Alice.Error != nil || r.Alice.IsError || !strings.Contains(r.Alice.Text, "42") {
		t.Errorf("alice's program while bob holds his share: %+v", r.Alice)
	}
	if r.BusyEndedFirst != 0 {
		t.Errorf("alice's program answered only after %d of bob's busy loops ended (%d ms)", r.BusyEndedFirst, r.AliceMs)
	}
	if r.BobNext.Error != nil || !r.BobNext.IsError || !strings.Contains(r.BobNext.Text, "PRINCIPAL_BUSY") {
		t.Errorf("bob's run past his share: %+v, want PRINCIPAL_BUSY", r.BobNext)
	}
	t.Logf("alice's program answered in %d ms while bob held his share", r.AliceMs)
}
