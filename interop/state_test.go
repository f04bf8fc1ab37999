package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// stateReplica starts `isogate serve --http` with token principals (alice,
// bob) on the shared redis-server, state.max_keys 3, stopped when the test
// ends.
func stateReplica(t *testing.T, redisURL string) *httpGateway {
	t.Helper()
	dir := t.TempDir()
	var tokens strings.Builder
	for name, token := range principalTokens {
		fmt.Fprintf(&tokens, "      %s: {token: %q}\n", name, token)
	}
	cfg := fmt.Sprintf(`server:
  auth:
    mode: token
    tokens:
%sstore:
  redis_url: %q
  hmac_key: state-interop-hmac-key-0123456789
state:
  max_keys: 3
`, tokens.String(), redisURL)
	file := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	gw := startHTTPWith(file)
	t.Cleanup(func() {
		if gw.cmd != nil && gw.cmd.Process != nil {
			_ = gw.cmd.Process.Signal(syscall.SIGTERM)
			_ = gw.cmd.Wait()
		}
	})
	if gw.err != nil {
		t.Fatalf("HTTP gateway: %v\n%s", gw.err, gw.logs)
	}
	return gw
}

// chainReport is scripts/call_tool.mjs's report of one call_tool_chain.
type chainReport struct {
	Call struct {
		OK    bool
		Value struct {
			IsError bool
			Content []struct{ Text string }
			Meta    map[string]any `json:"_meta"`
		}
		Error any
	}
}

// TestTypeScriptSDKStateAcrossReplicas: the official TypeScript SDK client
// runs call_tool_chain programs that keep state, through two isogate
// processes on one real redis-server: alice's counter goes on from replica
// A to replica B, bob's is his own, and a program that writes past
// state.max_keys fails with STATE_QUOTA_EXCEEDED (in _meta.isogate/code)
// keeping the keys written before.
func TestTypeScriptSDKStateAcrossReplicas(t *testing.T) {
	t.Parallel()
	srv := redistest.ForTest(t)
	a, b := stateReplica(t, srv.URL()), stateReplica(t, srv.URL())
	const visit = `const n = (await state.get("visits")) ?? 0; await state.set("visits", n + 1); return "visit " + (n + 1);`
	chain := func(gw *httpGateway, who, code string) (text string, isErr bool, code2 string) {
		t.Helper()
		args, _ := json.Marshal(map[string]any{"code": code})
		var r chainReport
		runNodeInto(t, &r, "call_tool.mjs", "--wait", "no", "--call", "call_tool_chain", "--args", string(args), "--http", gw.url, "--token", principalTokens[who])
		if !r.Call.OK || len(r.Call.Value.Content) == 0 {
			t.Fatalf("%s: %s: %+v", who, code, r.Call)
		}
		c, _ := r.Call.Value.Meta["isogate/code"].(string)
		return r.Call.Value.Content[0].Text, r.Call.Value.IsError, c
	}
	for i, step := range []struct {
		gw   *httpGateway
		who  string
		want string
	}{{a, "alice", "visit 1"}, {b, "alice", "visit 2"}, {b, "bob", "visit 1"}, {a, "alice", "visit 3"}} {
		if text, isErr, _ := chain(step.gw, step.who, visit); isErr || text != step.want {
			t.Fatalf("step %d, %s: %q, want %q", i+1, step.who, text, step.want)
		}
	}
	text, isErr, code := chain(b, "bob", `for (let i = 0; i < 5; i++) await state.set("k" + i, i); return "all kept"`)
	if !isErr || code != "STATE_QUOTA_EXCEEDED" {
		t.Fatalf("past state.max_keys: %q (code %q)", text, code)
	}
	if text, _, _ := chain(a, "bob", `return (await state.list()).join(",")`); text != "k0,k1,visits" {
		t.Fatalf("bob's keys after the refusal: %q", text)
	}
}
