package console

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/desk"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/replay"
)

// TestReplayAction: the replay action needs the CSRF token; its outcome
// (here REPLAY_DIFFERS, with markup and a right-to-left override in the
// difference) is shown on the record's page as inert, visible text; while
// one replay runs, another is refused with 429.
func TestReplayAction(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	var hold atomic.Bool // the next replay waits for the test, the others do not
	fake := func(ctx context.Context, rec *pipeline.RunRecord) (*replay.Outcome, error) {
		calls.Add(1)
		if hold.CompareAndSwap(true, false) {
			close(started)
			<-release
		}
		return &replay.Outcome{Same: false, Response: codemode.Response{Value: []byte(`"<script>window.x=1</script>"`)},
			Difference: "the result differs from the record:\nrecorded: \"<img src=x onerror=alert(1)>\u202egpj.exe\""}, nil
	}
	d := desk.New()
	c := New(Sources{Desk: d, Replay: fake}, Options{Admins: []string{"scope:isogate.admin"}, Verify: fakeVerify})
	d.KeepRecord("bob", &pipeline.RunRecord{ID: "run-1", Code: "return 1", Outcome: pipeline.OutcomeOK})
	ck, csrf := signIn(t, c, "admin-token")
	cookie := http.Header{"Cookie": {ck.String()}}

	if res := do(t, c, "POST", "/console/runs/replay", url.Values{"id": {"run-1"}}, cookie); res.StatusCode != 403 || calls.Load() != 0 {
		t.Fatalf("replay without the CSRF token: %d (replayed %d times), want 403", res.StatusCode, calls.Load())
	}
	first := make(chan *http.Response, 1)
	hold.Store(true)
	go func() {
		first <- do(t, c, "POST", "/console/runs/replay", url.Values{"id": {"run-1"}, "csrf": {csrf}}, cookie)
	}()
	<-started
	if res := do(t, c, "POST", "/console/runs/replay", url.Values{"id": {"run-1"}, "csrf": {csrf}}, cookie); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a second replay while one runs: %d, want 429", res.StatusCode)
	}
	close(release)
	if res := <-first; res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/record?id=run-1" {
		t.Fatalf("replay: %d %s, want a redirect to the record", res.StatusCode, res.Header.Get("Location"))
	}
	res := do(t, c, "GET", "/console/record?id=run-1", nil, cookie)
	b, _ := io.ReadAll(res.Body)
	page := string(b)
	if !strings.Contains(page, `id="replay-verdict"`) || !strings.Contains(page, "REPLAY_DIFFERS") {
		t.Fatalf("the record page shows no REPLAY_DIFFERS:\n%s", page)
	}
	if strings.Contains(page, "<img") || strings.Contains(page, "<script>window") || strings.Contains(page, "\u202e") ||
		!strings.Contains(page, `\u202e`) {
		t.Errorf("the difference is not rendered inert and visible:\n%s", page)
	}
	if res := do(t, c, "POST", "/console/runs/replay", url.Values{"id": {"no-such-run"}, "csrf": {csrf}}, cookie); res.StatusCode != 404 {
		t.Errorf("replay of an unknown record: %d, want 404", res.StatusCode)
	}
}

// TestNoReplayWithoutAReplayer: a console given no replayer offers no
// replay action.
func TestNoReplayWithoutAReplayer(t *testing.T) {
	d := desk.New()
	c := New(Sources{Desk: d}, Options{Verify: func(context.Context, string, *http.Request) (*authn.Principal, error) {
		return &authn.Principal{Name: "alice"}, nil
	}, Admins: []string{"alice"}})
	d.KeepRecord("bob", &pipeline.RunRecord{ID: "run-1", Code: "return 1", Outcome: pipeline.OutcomeOK})
	auth := http.Header{"Authorization": {"Bearer any"}}
	res := do(t, c, "GET", "/console/record?id=run-1", nil, auth)
	b, _ := io.ReadAll(res.Body)
	if strings.Contains(string(b), `id="replay"`) {
		t.Error("the record page offers a replay without a replayer")
	}
	if res := do(t, c, "POST", "/console/runs/replay", url.Values{"id": {"run-1"}}, auth); res.StatusCode != http.StatusNotImplemented {
		t.Errorf("replay without a replayer: %d, want 501", res.StatusCode)
	}
}

// TestReplayRefusedRecord: the Replay button on a run sandbox.typecheck:
// strict refused before it started (replayed by the real replay.Run, as
// the gateway's console does) shows it reproduced as its recorded refusal,
// and says why it was not re-run, not REPLAY_DIFFERS (issue 43).
func TestReplayRefusedRecord(t *testing.T) {
	d := desk.New()
	rp := func(ctx context.Context, rec *pipeline.RunRecord) (*replay.Outcome, error) {
		return replay.Run(ctx, rec, replay.Options{})
	}
	c := New(Sources{Desk: d, Replay: rp}, Options{Admins: []string{"scope:isogate.admin"}, Verify: fakeVerify})
	msg := "TYPECHECK_FAILED: the program was not run (no tool was called): its tool calls have 1 certain mistake. Fix them and run it again:\n- line 1, column 25: `no_such_tool` is not a tool of everything"
	d.KeepRecord("bob", &pipeline.RunRecord{ID: "run-1", Code: "return await everything.no_such_tool({})", Tier: "v8",
		Outcome: pipeline.OutcomeError, Error: &pipeline.RunError{Code: "TYPECHECK_FAILED", Message: msg}, Console: []string{}})
	ck, csrf := signIn(t, c, "admin-token")
	cookie := http.Header{"Cookie": {ck.String()}}
	if res := do(t, c, "POST", "/console/runs/replay", url.Values{"id": {"run-1"}, "csrf": {csrf}}, cookie); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("replay: %d, want a redirect to the record", res.StatusCode)
	}
	b, _ := io.ReadAll(do(t, c, "GET", "/console/record?id=run-1", nil, cookie).Body)
	page := string(b)
	if !strings.Contains(page, `id="replay-verdict" class="state ok">reproduced`) || strings.Contains(page, "REPLAY_DIFFERS") ||
		!strings.Contains(page, "refused before it started (TYPECHECK_FAILED)") || !strings.Contains(page, "is not a tool of everything") {
		t.Fatalf("the refused record's replay:\n%s", page)
	}
}
