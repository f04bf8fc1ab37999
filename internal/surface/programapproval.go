package surface

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/programs"
)

// Approvals of saved programs (issue 45): a server.auth.rules approve
// naming programs.<name> puts the program under approval for the matched
// principals. A run that may call one (a tools/call of program_<name>, or
// a program naming programs.<name>) asks a person before it starts, once
// per program, through the client's approver (elicitation, or approval in
// rounds; not the console's, which sees the run only once it starts):
// declined or unanswerable, the run is refused
// (APPROVAL_DENIED, APPROVAL_REQUIRED) and nothing of it ran. The
// question names the program and, for a direct call, its arguments.

// calledProgramKey marks the context of a call_tool_chain run that is a
// tools/call of a saved program (programCallsMiddleware).
type calledProgramKey struct{}

// calledProgram is the saved program a direct call runs, and its
// arguments.
type calledProgram struct {
	name string
	args json.RawMessage
}

func withCalledProgram(ctx context.Context, name string, args json.RawMessage) context.Context {
	return context.WithValue(ctx, calledProgramKey{}, calledProgram{name: name, args: args})
}

// approvePrograms asks for the programs of a run that need approval: the
// program a direct call runs, and those of its library. nil: none needs
// it, or each was approved; else the result that refuses the run.
func (sf *Surface) approvePrograms(ctx context.Context, lib *codemode.Library) *mcp.CallToolResult {
	type ask struct {
		name string
		args json.RawMessage
	}
	cp, direct := ctx.Value(calledProgramKey{}).(calledProgram)
	if !direct && lib.Empty() {
		return nil // most runs
	}
	var asks []ask
	if direct {
		asks = append(asks, ask{cp.name, cp.args})
	}
	if lib != nil {
		names := make([]string, 0, len(lib.Programs))
		for name, p := range lib.Programs {
			if p.DeniedBy == "" {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		for _, n := range names {
			asks = append(asks, ask{name: n})
		}
	}
	asked := map[string]bool{}
	approve := pipeline.ApprovalStage(sf.policy)(pipeline.CallerFunc(func(context.Context, *pipeline.Call) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil // approved: the run goes on
	}))
	for _, a := range asks {
		name, _, _ := strings.Cut(a.name, "@") // a direct call's run names its program pinned: name@3
		if asked[name] || !sf.policy.ApprovalNeeded(ctx, programs.PolicyBackend, name) {
			continue
		}
		asked[name] = true
		c := &pipeline.Call{Backend: programs.PolicyBackend, Tool: name, Args: a.args, NeedsApproval: true}
		if _, err := approve.Call(ctx, c); err != nil {
			return programError(err)
		}
	}
	return nil
}

// savedApproval is the plan approval a direct call's version got at its
// save, when it stands for this run: server.auth.approval_at_save is on,
// the run is a direct call of that version (programCallsMiddleware made
// it one call pinned to the version) and the caller is its saver, who
// approved. Each approved tool covers the calls the plan showed, no more.
func (sf *Surface) savedApproval(ctx context.Context, lib *codemode.Library) []pipeline.PlanTool {
	if !sf.opts.Auth.ApprovalAtSave || lib == nil || len(lib.Roots) != 1 || !strings.Contains(lib.Roots[0], "@") {
		return nil
	}
	if _, direct := ctx.Value(calledProgramKey{}).(calledProgram); !direct {
		return nil
	}
	c := sf.programCaller(ctx)
	v, err := sf.programs.programs.Resolve(ctx, c, lib.Roots[0])
	if err != nil || v.Approved == nil || v.Approved.By != c.Owner() {
		return nil
	}
	var tools []pipeline.PlanTool
	if json.Unmarshal(v.Approved.Tools, &tools) != nil {
		return nil
	}
	return tools
}
