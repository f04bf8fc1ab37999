package pipeline

import (
	"context"

	"github.com/isogate/isogate/internal/authn"
)

// ApprovePlan makes tools approved for the run as a plan approval does
// (each covering Covers calls): a saved program's plan approved at its
// save (server.auth.approval_at_save).
func (r *Run) ApprovePlan(tools []PlanTool) {
	if len(tools) > 0 {
		r.approve(tools)
	}
}

// ApprovalNeeded reports whether a call of backend.tool by the caller in
// ctx needs a person's yes: backends.<name>.tools.approve, or a
// server.auth.rules approve naming it for the caller's principal. Saved
// programs ask it of "programs.<name>" before they run (issue 45).
func (p *Policy) ApprovalNeeded(ctx context.Context, backend, tool string) bool {
	c := &Call{Backend: backend, Tool: tool}
	if p.Decide(backend, tool) == NeedsApproval {
		return true
	}
	_, approve, _ := p.principalDecision(authn.FromContext(ctx), c)
	return approve
}
