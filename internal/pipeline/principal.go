package pipeline

import (
	"context"
	"log/slog"
	"slices"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/v8sandbox"
)

// principalRule is one server.auth.rules entry, its patterns folded.
type principalRule struct {
	name                       string
	principals, groups, scopes []string
	allow, deny, approve       []string // folded "<backend>.<tool>" globs
	maxToolCalls               int
}

// SetPrincipalRules makes p apply server.auth.rules from now on, to calls
// whose context carries a principal (authn.WithPrincipal). They are kept
// across Replace: a reload sets them again.
func (p *Policy) SetPrincipalRules(rules map[string]config.AccessRule) {
	names := make([]string, 0, len(rules))
	for n := range rules {
		names = append(names, n)
	}
	sort.Strings(names)
	list := make([]principalRule, 0, len(names))
	for _, n := range names {
		r := rules[n]
		list = append(list, principalRule{name: n, principals: r.Principals, groups: r.Groups, scopes: r.Scopes,
			allow: foldAll(r.Allow), deny: foldAll(r.Deny), approve: foldAll(r.Approve), maxToolCalls: r.MaxToolCalls})
	}
	p.principal.Store(&list)
}

// matches reports whether the rule applies to pr.
func (r *principalRule) matches(pr *authn.Principal) bool {
	if len(r.principals)+len(r.groups)+len(r.scopes) == 0 {
		return true
	}
	return slices.Contains(r.principals, pr.Name) ||
		slices.ContainsFunc(r.groups, pr.InGroup) || slices.ContainsFunc(r.scopes, pr.HasScope)
}

// principalDecision is what the rules matching pr say of c: denied (by
// which rule), needs approval, and the call budget of a run (0: none).
func (p *Policy) principalDecision(pr *authn.Principal, c *Call) (denied string, approve bool, budget int) {
	if p == nil || pr == nil {
		return "", false, 0
	}
	list := p.principal.Load()
	if list == nil {
		return "", false, 0
	}
	name := fold(c.Name())
	for i := range *list {
		r := &(*list)[i]
		if !r.matches(pr) {
			continue
		}
		if matchAny(r.deny, name) || (len(r.allow) > 0 && !matchAny(r.allow, name) && !matchAny(r.approve, name)) {
			return r.name, false, 0
		}
		if matchAny(r.approve, name) {
			approve = true
		}
		if r.maxToolCalls > 0 && (budget == 0 || r.maxToolCalls < budget) {
			budget = r.maxToolCalls
		}
	}
	return "", approve, budget
}

// AuditStage logs one audit event per tool call that carries a principal:
// who, which tool, the outcome, the duration and the run, never the
// arguments or the result. It sits outermost so that refused calls are
// audited too.
func AuditStage(logger *slog.Logger) Stage {
	return func(next Caller) Caller {
		return CallerFunc(func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
			pr := authn.FromContext(ctx)
			if pr == nil || logger == nil {
				return next.Call(ctx, c)
			}
			start := time.Now()
			res, err := next.Call(ctx, c)
			outcome := "ok"
			switch {
			case err != nil:
				outcome = "error"
				if code := v8sandbox.CodeOf(err); code != "" {
					outcome = string(code)
				}
			case res != nil && res.IsError:
				outcome = "tool_error"
			}
			attrs := []any{slog.String("event", "tool_call"), slog.String("principal", pr.Name),
				slog.String("tool", c.Name()), slog.String("outcome", outcome),
				slog.Int64("duration_ms", time.Since(start).Milliseconds())}
			if run := RunFrom(ctx); run != nil {
				attrs = append(attrs, slog.String("run", run.ID))
			}
			logger.Info("audit", attrs...)
			return res, err
		})
	}
}
