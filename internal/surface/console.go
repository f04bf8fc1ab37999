package surface

import (
	"context"
	"net/http"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/pipeline"
)

// onDesk puts a program run on the operator's desk for as long as it
// runs: the returned context is cancelled by the console's cancel button,
// carries an approver the console may answer beside the client's, and
// onCall (called after each completed tool call) also counts the run's
// calls; onRun (for codemode.Request.OnRun) links the desk's run to the
// run's record, so the console shows its calls while it runs. Without a
// desk everything is returned unchanged.
func (sf *Surface) onDesk(ctx context.Context, intent, code string, onCall func(int, string)) (context.Context, func(int, string), func(*pipeline.Run), func()) {
	if sf.desk == nil {
		return ctx, onCall, nil, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	run, off := sf.desk.StartRun(principalName(ctx), intent, code, cancel)
	ctx = pipeline.WithApprover(ctx, sf.desk.Approver(pipeline.ApproverFrom(ctx), principalName(ctx), run.ID))
	counted := func(done int, tool string) {
		run.Called()
		if onCall != nil {
			onCall(done, tool)
		}
	}
	return ctx, counted, run.Attach, func() { off(); cancel(nil) }
}

// principalName is the name of ctx's principal, "" without one.
func principalName(ctx context.Context) string {
	if p := authn.FromContext(ctx); p != nil {
		return p.Name
	}
	return ""
}

// Verifier returns the bearer-token check in force for HTTP clients (the
// same as /mcp's), or nil when authentication is off. The console signs
// in with it.
func (sf *Surface) Verifier() func(ctx context.Context, token string, r *http.Request) (*authn.Principal, error) {
	verify := sf.verifier()
	if verify == nil {
		return nil
	}
	return func(ctx context.Context, token string, r *http.Request) (*authn.Principal, error) {
		info, err := verify(ctx, token, r)
		if err != nil {
			return nil, err
		}
		return authn.FromTokenInfo(info), nil
	}
}

// SessionCount is the number of open client sessions.
func (sf *Surface) SessionCount() int { return sf.sessions.Len() }
