package pipeline

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/authn"
)

func testPlan(tools ...PlanTool) *Plan { return &Plan{Tools: tools} }

// A plan that names a tool the configuration or the caller's
// server.auth.rules deny is refused with PLAN_DENIED, naming the call
// and its lines.
func TestAdmitPlanRefusesDeniedTools(t *testing.T) {
	pol := NewPolicy(map[string]config.Backend{"fs": {Tools: config.ToolPolicy{Deny: []string{"delete_*"}}}})
	pol.SetPrincipalRules(map[string]config.AccessRule{"interns": {Principals: []string{"ann"}, Deny: []string{"db.drop"}}})
	ok := testPlan(PlanTool{Backend: "fs", Tool: "read", Loop: "no", Lines: []int{1}}, PlanTool{Backend: "db", Tool: "drop", Loop: "no", Lines: []int{2}})
	if err := AdmitPlan(context.Background(), pol, ok, false); err != nil {
		t.Fatalf("no principal: %v", err)
	}
	cases := []struct {
		name string
		ctx  context.Context
		plan *Plan
		want string
	}{
		{"configuration", context.Background(),
			testPlan(PlanTool{Backend: "fs", Tool: "read", Lines: []int{1}}, PlanTool{Backend: "fs", Tool: "DELETE_all", Lines: []int{3, 7}, Unknown: true}),
			"PLAN_DENIED: the program was not run (no tool was called): line 3, 7 calls fs.DELETE_all, which the configuration denies (backends.fs.tools.deny)"},
		{"principal", authn.WithPrincipal(context.Background(), &authn.Principal{Name: "ann"}), ok,
			"PLAN_DENIED: the program was not run (no tool was called): line 2 calls db.drop, which is not available to ann: server.auth.rules.interns denies it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := AdmitPlan(tc.ctx, pol, tc.plan, false)
			var refused *Error
			if !errors.As(err, &refused) || refused.Code != CodePlanDenied || err.Error() != tc.want {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

type planApprover struct {
	approverFunc
	asked  []*mcp.ElicitParams
	answer bool
	err    error
}

func (a *planApprover) ApproveParams(_ context.Context, p *mcp.ElicitParams) (bool, error) {
	a.asked = append(a.asked, p)
	return a.answer, a.err
}

// With plan approval, the tools under approval are asked about once; an
// accepted plan's calls to them ask no more during the run, other tools
// under approval still ask; a declined plan refuses the program.
func TestPlanApproval(t *testing.T) {
	pol := NewPolicy(map[string]config.Backend{"db": {Tools: config.ToolPolicy{Approve: []string{"write", "drop"}}}})
	plan := testPlan(PlanTool{Backend: "db", Tool: "read", Loop: "no", Lines: []int{1}},
		PlanTool{Backend: "db", Tool: "write", Loop: "yes", Lines: []int{2}})
	perCall := 0
	a := &planApprover{answer: true, approverFunc: func(context.Context, *Call) (bool, error) { perCall++; return true, nil }}
	run := NewRun(0)
	ctx := WithRun(WithApprover(context.Background(), a), run)
	if err := AdmitPlan(ctx, pol, plan, true); err != nil {
		t.Fatal(err)
	}
	if len(a.asked) != 1 || !strings.Contains(a.asked[0].Message, "- db.write (line 2; in a loop: yes)") ||
		strings.Contains(strings.SplitN(a.asked[0].Message, "Everything", 2)[0], "db.read") {
		t.Fatalf("asked %d times: %+v", len(a.asked), a.asked)
	}
	p := New(Options{Policy: pol, Backend: CallerFunc(func(context.Context, *Call) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})})
	for range 20 {
		if _, err := p.Call(ctx, &Call{Backend: "db", Tool: "write"}); err != nil {
			t.Fatal(err)
		}
	}
	if perCall != 0 {
		t.Fatalf("an approved plan's calls asked %d times", perCall)
	}
	if _, err := p.Call(ctx, &Call{Backend: "db", Tool: "drop"}); err != nil || perCall != 1 {
		t.Fatalf("a tool outside the plan: err %v, asked %d", err, perCall)
	}

	a.answer = false
	err := AdmitPlan(WithRun(WithApprover(context.Background(), a), NewRun(0)), pol, plan, true)
	if v := new(Error); !errors.As(err, &v) || v.Code != CodeApprovalDenied {
		t.Fatalf("declined plan: %v", err)
	}
	// Without plan_approval, or when the client cannot be asked, each
	// call decides.
	asked := len(a.asked)
	if err := AdmitPlan(ctx, pol, plan, false); err != nil || len(a.asked) != asked {
		t.Fatalf("plan_approval off: %v, asked %d", err, len(a.asked)-asked)
	}
	a.err = ErrCannotAsk
	if err := AdmitPlan(ctx, pol, plan, true); err != nil {
		t.Fatalf("cannot ask: %v", err)
	}
}

// A program cannot draw lines of its own in the plan shown to a person.
func TestPlanTextEscapes(t *testing.T) {
	p := &Plan{Tools: []PlanTool{{Backend: "db", Tool: "w\u2028x", Loop: "no", Lines: []int{1}}}, Partial: true,
		Dynamic: []PlanSite{{Line: 2, Column: 1, Text: "a[\n- db.safe (line 9)\n]", Why: "a computed tool name"}}}
	msg := PlanElicitParams(p, p.Tools).Message
	if strings.ContainsRune(msg, '\u2028') || strings.Contains(msg, "\n- db.safe") {
		t.Fatalf("unescaped: %q", msg)
	}
}

// An approved plan covers the calls it announced: a tool "in a loop: no"
// with at most 2 calls rides on the approval twice, however many calls
// race for it; the calls past that ask on their own. The count holds
// across the calls of one run only: another run of the same plan gets
// its own.
func TestPlanApprovalCoversTheAnnouncedCalls(t *testing.T) {
	pol := NewPolicy(map[string]config.Backend{"db": {Tools: config.ToolPolicy{Approve: []string{"write"}}}})
	plan := &Plan{}
	plan.Add("db", "write", 2, "no", 1, false)
	plan.Add("db", "write", 5, "no", 1, false)
	if got := plan.Tools[0]; got.Calls != 2 || got.Covers() != 2 {
		t.Fatalf("plan tool %+v, covers %d", got, got.Covers())
	}
	var mu sync.Mutex
	perCall := 0
	a := &planApprover{answer: true, approverFunc: func(context.Context, *Call) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		perCall++
		return false, nil // the person declines every call asked on its own
	}}
	p := New(Options{Policy: pol, Backend: CallerFunc(func(context.Context, *Call) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})})
	for range 2 {
		run := NewRun(0)
		ctx := WithRun(WithApprover(context.Background(), a), run)
		if err := AdmitPlan(ctx, pol, plan, true); err != nil {
			t.Fatal(err)
		}
		if msg := a.asked[len(a.asked)-1].Message; !strings.Contains(msg, "- db.write (line 2, 5; in a loop: no; at most 2 calls)") {
			t.Fatalf("plan approval:\n%s", msg)
		}
		mu.Lock()
		perCall = 0
		mu.Unlock()
		var wg sync.WaitGroup
		var made, denied atomic.Int32
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := p.Call(ctx, &Call{Backend: "db", Tool: "write"})
				if v := new(Error); errors.As(err, &v) && v.Code == CodeApprovalDenied {
					denied.Add(1)
				} else if err == nil {
					made.Add(1)
				}
			}()
		}
		wg.Wait()
		if made.Load() != 2 || denied.Load() != 8 || perCall != 8 {
			t.Fatalf("%d calls made, %d denied, %d asked on their own; want 2, 8, 8", made.Load(), denied.Load(), perCall)
		}
	}
	for _, tc := range []struct {
		tool  PlanTool
		wants int
	}{
		{PlanTool{Loop: "yes"}, -1}, {PlanTool{Loop: "unknown"}, -1}, {PlanTool{Loop: "no"}, 1},
		{PlanTool{Loop: "no", Calls: 3}, 3}, {PlanTool{Loop: "maybe"}, 1},
	} {
		if got := tc.tool.Covers(); got != tc.wants {
			t.Errorf("%+v covers %d, want %d", tc.tool, got, tc.wants)
		}
	}
}
