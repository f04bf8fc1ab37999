package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// attributionReport is the report of scripts/principals_attribution.mjs.
type attributionReport struct {
	BobCall    outcomeText
	Refused    map[string]outcomeText // alice's programs while bob's call was in flight
	Alone      outcomeText            // alice's program alone on the backend
	BobAsked   []string               // what bob's handlers received after his own request
	CarolAsked []string
	AliceAsked []string
	Logs       map[string][]string // log messages each received
}

type outcomeText struct {
	outcome
	IsError bool
	Text    string
}

// principalTokens are the static tokens of the multi-principal gateway.
var principalTokens = map[string]string{
	"alice": "alice-interop-token-0123",
	"bob":   "bob-interop-token-012345",
	"carol": "carol-interop-token-0123",
}

// principalsGateway starts `isogate serve --http` with server.auth.mode
// token (alice, bob, carol) over the real server-everything, stopped when
// the test ends.
func principalsGateway(t *testing.T) *httpGateway {
	t.Helper()
	dir := t.TempDir()
	var tokens strings.Builder
	for name, token := range principalTokens {
		fmt.Fprintf(&tokens, "      %s: {token: %q}\n", name, token)
	}
	everything := filepath.Join(repoRoot, "examples", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	cfg := fmt.Sprintf(`server:
  auth:
    mode: token
    tokens:
%sbackends:
  everything:
    command: node
    args: [%q, stdio]
sandbox:
  isolation: process
`, tokens.String(), everything)
	file := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	gw := startHTTPWith(file)
	t.Cleanup(func() {
		if gw.cmd.Process != nil {
			_ = gw.cmd.Process.Signal(syscall.SIGTERM)
			_ = gw.cmd.Wait()
		}
	})
	if gw.err != nil {
		t.Fatalf("HTTP gateway: %v\n%s", gw.err, gw.logs)
	}
	return gw
}

// TestTypeScriptSDKPrincipalsStayApart: three principals (static tokens)
// connect with the official TypeScript SDK client, each answering
// sampling and elicitation as itself. While bob's passthrough
// trigger-sampling-request waits for bob's answer, alice's call_tool_chain
// program calls server-everything's trigger_sampling_request with her
// secret, and trigger_elicitation_request: bob and carol are asked nothing
// and receive no log message with her secret, and alice's program gets a
// refusal, never bob's answer. Alone, her program gets her own answer.
func TestTypeScriptSDKPrincipalsStayApart(t *testing.T) {
	t.Parallel()
	gw := principalsGateway(t)
	const secret = "alice-ts-secret-51e2"
	var r attributionReport
	runNodeInto(t, &r, "principals_attribution.mjs", "--secret", secret,
		"--alice", principalTokens["alice"], "--bob", principalTokens["bob"], "--token", principalTokens["carol"],
		"--http", gw.url+"?expose=both")
	if r.BobCall.Error != nil || !strings.Contains(r.BobCall.Text, "bob held") {
		t.Errorf("bob's own call: %+v", r.BobCall)
	}
	for what, got := range r.Refused {
		if got.Error != nil || !strings.Contains(got.Text, "cannot be attributed") || strings.Contains(got.Text, "bob") {
			t.Errorf("alice's %s program with bob's call in flight: %+v, want a refusal", what, got)
		}
	}
	if len(r.Refused) != 2 {
		t.Errorf("refused: %+v", r.Refused)
	}
	if r.Alone.Error != nil || !strings.Contains(r.Alone.Text, "alice answers") {
		t.Errorf("alice's program alone: %+v", r.Alone)
	}
	for who, asked := range map[string][]string{"bob": r.BobAsked, "carol": r.CarolAsked} {
		if len(asked) != 0 {
			t.Errorf("%s was asked %q", who, asked)
		}
	}
	if len(r.AliceAsked) != 1 || !strings.Contains(r.AliceAsked[0], "alone") {
		t.Errorf("alice was asked %q", r.AliceAsked)
	}
	for who, logs := range r.Logs {
		for _, l := range logs {
			if who != "alice" && strings.Contains(l, secret) {
				t.Errorf("%s received the log message %q", who, l)
			}
		}
	}
}
