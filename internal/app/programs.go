package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/programs"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/v8sandbox"
)

// programStore is the store saved programs are kept in: Redis with
// store.redis_url (every replica sees the same programs; through client,
// the replica's shared one, when it is set), else a bbolt file in
// store.data_dir, opened (and created) on first use.
func programStore(cfg *config.Config, client *redis.Client) (kv.Store, error) {
	if cfg.Store.RedisURL != "" {
		return kv.NewRedis(kv.RedisOptions{URL: cfg.Store.RedisURL, Client: client, HMACKey: []byte(cfg.Store.HMACKey)})
	}
	dir := cfg.Store.DataDir
	// Until the first save the file need not exist: a gateway that never
	// saves creates nothing, and lists no programs without opening it.
	return kv.NewLazy(func() (kv.Store, error) { return kv.OpenBolt(kv.BoltOptions{Dir: dir}) },
		func() bool {
			_, err := os.Stat(filepath.Join(dir, kv.BoltFile))
			return !errors.Is(err, fs.ErrNotExist)
		}), nil
}

// vetter checks a program at save as sandbox.typecheck: strict would,
// whatever the mode, and applies the caller's policy to its plan.
type vetter struct {
	engine  *codemode.Engine
	policy  *pipeline.Policy
	timeout time.Duration // the check's wait (the compiler may be loading)
	// approveAtSave asks the saver to approve the plan's tools that need
	// approval (server.auth.approval_at_save), through ctx's approver.
	approveAtSave bool
	// programs are the saved programs a program may call (set once they
	// exist: they are built with this vetter).
	programs *programs.Programs
}

// vetSource is code as it is checked at save: with the args it reads
// declared, before the code, or after a module's (its export must start
// a line, and its entry point reads args only once called).
func vetSource(code string) string {
	if codemode.ExportsMain(code) {
		return code + "\n" + programs.Wrap("", nil)
	}
	return programs.Wrap(code, nil)
}

// Vet implements programs.Vetter.
func (v vetter) Vet(ctx context.Context, name, code string) (*programs.Vetting, error) {
	// Code that does not parse would fail every call: refused here, at its
	// own line and column, then as it runs (after the args line).
	if err := codemode.CheckSyntax(code); err != nil {
		return nil, v8sandbox.Errorf(programs.CodeInvalid, "the program was not saved: its code does not parse: %v", err)
	}
	if err := codemode.CheckSyntax(vetSource(code)); err != nil {
		return nil, v8sandbox.Errorf(programs.CodeInvalid, "the program was not saved: its code does not parse beside the constant args it is given: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, v.timeout)
	defer cancel()
	lib, err := v.library(ctx, name, code)
	if err != nil {
		return nil, err
	}
	rep, plan, err := v.engine.CheckWith(ctx, vetSource(code), lib)
	if err != nil {
		// The advice a run refused so gets: only a checker that could not
		// answer is worth retrying as is.
		c, advice := codemode.CodeTypecheckUnavailable, "try again in a few seconds"
		switch {
		case errors.Is(err, typecheck.ErrTimeout):
			c, advice = codemode.CodeTypecheckTimeout, "simplify its types (a deeply recursive type, a huge union or literal), or try again if the gateway was busy"
		case errors.Is(err, typecheck.ErrTooComplex):
			c, advice = codemode.CodeTypecheckTooComplex, "checking it exceeded the type checker's memory: simplify its types or split the program"
		}
		return nil, v8sandbox.Errorf(c, "the program was not saved: it could not be type-checked (%v); %s", err, advice)
	}
	// A denied tool is said as such first, as a run says it.
	if err := pipeline.AdmitPlan(ctx, v.policy, plan, false); err != nil {
		return nil, v8sandbox.Errorf(v8sandbox.CodeOf(err), "the program was not saved: %s", strings.TrimPrefix(err.Error(), string(v8sandbox.CodeOf(err))+": "))
	}
	if certain := rep.Certain(); len(certain) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "the program was not saved: its tool calls have %d certain mistake(s) (as sandbox.typecheck: strict finds them). Fix them and save it again:", len(certain))
		for _, d := range certain {
			b.WriteString("\n- " + d.Hint())
		}
		return nil, v8sandbox.Errorf(codemode.CodeTypecheckFailed, "%s", b.String())
	}
	out := &programs.Vetting{Calls: []string{}}
	if plan != nil {
		for _, t := range plan.Tools {
			if !t.Unknown {
				out.Calls = append(out.Calls, t.Name())
			}
		}
		out.Partial = plan.Partial
		out.Plan, _ = json.Marshal(plan)
		if v.approveAtSave {
			out.Approved = v.approve(ctx, plan)
		}
	}
	return out, nil
}

// library is the saved programs code (program name's) calls, for the
// saver (ctx's principal), as a run of it would get them: programs.<name>
// is then typed, and the plan (checked against policy, kept with the
// version) holds at each call of one the tools it may call. A cycle (name
// calling itself, directly or through others) or a chain too deep refuses
// the save (PROGRAM_DEPTH), as it would refuse the run.
func (v vetter) library(ctx context.Context, name, code string) (*codemode.Library, error) {
	if v.programs == nil || !strings.Contains(code, "programs") {
		return nil, nil
	}
	deniedTo := v.policy.DeniedTo(ctx)
	roots, all, err := v.programs.CalleesAs(ctx, programs.Caller{Principal: authn.FromContext(ctx)}, name, code,
		func(name string) string { return deniedTo(programs.PolicyBackend, name) })
	if err != nil {
		return nil, err
	}
	return codemode.LibraryOf(roots, all), nil
}

// approve asks the saver, through ctx's approver, to approve the plan's
// tools that need approval for it, and returns those approved (JSON of
// pipeline.PlanTool); nil when none needs it, or the person declined or
// could not be asked: the program is saved all the same, and its calls
// ask as any run's do.
func (v vetter) approve(ctx context.Context, plan *pipeline.Plan) json.RawMessage {
	var asks []pipeline.PlanTool
	for _, t := range plan.Tools {
		if !t.Unknown && t.DeniedBy == "" && v.policy.ApprovalNeeded(ctx, t.Backend, t.Tool) {
			asks = append(asks, t)
		}
	}
	a, ok := pipeline.ApproverFrom(ctx).(pipeline.PlanApprover)
	if len(asks) == 0 || !ok {
		return nil
	}
	if accepted, err := a.ApproveParams(ctx, pipeline.PlanElicitParams(plan, asks)); err != nil || !accepted {
		return nil
	}
	out, _ := json.Marshal(asks)
	return out
}

// StoreHealth reports whether the durable store (saved programs, their
// state, skills) answers: nil, or why not (a bbolt file another process
// holds, a Redis that does not answer), wrapping kv.ErrUnavailable.
// /readyz, isogate_store_up{store="kv"} and isogate doctor ask it.
func (a *App) StoreHealth(ctx context.Context) error {
	if a.kv == nil {
		return nil
	}
	if err := kv.Ping(ctx, a.kv); err != nil {
		return fmt.Errorf("the durable store (saved programs, state, skills): %w", err)
	}
	return nil
}
