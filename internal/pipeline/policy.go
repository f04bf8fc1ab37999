package pipeline

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/text/unicode/norm"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/authn"
)

// Decision is what the policy says about one tool.
type Decision int

// The decisions, in increasing strictness.
const (
	// Allowed tools are offered and called freely.
	Allowed Decision = iota
	// NeedsApproval tools are offered; each call asks a person first.
	NeedsApproval
	// Denied tools are neither offered nor callable.
	Denied
)

// Policy decides which tools of which backend programs may reach, from
// globs over original tool names (backends.<name>.tools). Names and
// patterns are compared case-insensitively after Unicode NFKC normalisation
// with invisible (format) characters removed, so no other spelling of a
// denied tool slips through. The zero value and nil allow everything.
type Policy struct {
	rules     atomic.Pointer[map[string]rules] // replaced by Replace
	principal atomic.Pointer[[]principalRule]  // server.auth.rules (principal.go)
}

type rules struct {
	allow, deny, approve []string // folded patterns
	approveKey           string   // config key of approve, for messages

	prompts, resources itemRules
	deniesAllTools     bool // tools.deny has a pattern of only '*'
}

// itemRules select prompts or resources (folded patterns).
type itemRules struct{ allow, deny []string }

// NewPolicy builds the policy of the configured backends.
func NewPolicy(backends map[string]config.Backend) *Policy {
	set := map[string]rules{}
	p := &Policy{}
	p.rules.Store(&set)
	for name, b := range backends {
		t := b.Tools
		if len(t.Allow)+len(t.Deny)+len(t.Approve)+len(b.Prompts.Allow)+len(b.Prompts.Deny)+
			len(b.Resources.Allow)+len(b.Resources.Deny) == 0 {
			continue
		}
		set[name] = rules{
			allow: foldAll(t.Allow), deny: foldAll(t.Deny), approve: foldAll(t.Approve),
			approveKey: "backends." + name + ".tools.approve",
			prompts:    itemRules{foldAll(b.Prompts.Allow), foldAll(b.Prompts.Deny)},
			resources:  itemRules{foldAll(b.Resources.Allow), foldAll(b.Resources.Deny)},
			deniesAllTools: slices.ContainsFunc(t.Deny, func(p string) bool {
				p = strings.TrimSpace(p)
				return p != "" && strings.Trim(p, "*") == ""
			}),
		}
	}
	return p
}

// Replace makes p decide as q does from now on (a configuration reload).
func (p *Policy) Replace(q *Policy) {
	p.rules.Store(q.rules.Load())
}

// ruleSet returns the current rules; nil for the zero Policy.
func (p *Policy) ruleSet() map[string]rules {
	if p == nil {
		return nil
	}
	if m := p.rules.Load(); m != nil {
		return *m
	}
	return nil
}

// Decide returns the decision for one tool: deny wins; a tool under approve
// is offered with approval (approve extends allow); a tool outside a
// non-empty allow list is denied.
func (p *Policy) Decide(backend, tool string) Decision {
	if p == nil {
		return Allowed
	}
	r, ok := p.ruleSet()[backend]
	if !ok {
		return Allowed
	}
	name := fold(tool)
	switch {
	case matchAny(r.deny, name):
		return Denied
	case matchAny(r.approve, name):
		return NeedsApproval
	case len(r.allow) > 0 && !matchAny(r.allow, name):
		return Denied
	}
	return Allowed
}

// DeniedBy is the configuration key that denies backend's tool, with the
// pattern that names it: "backends.<b>.tools.deny" and the first deny
// pattern that matches, "backends.<b>.tools.allow" and "" when the tool is
// outside a non-empty allow list (and not under approve); "" when the tool
// is offered. It agrees with Decide.
func (p *Policy) DeniedBy(backend, tool string) (rule, pattern string) {
	if p == nil {
		return "", ""
	}
	r, ok := p.ruleSet()[backend]
	if !ok {
		return "", ""
	}
	name := fold(tool)
	for _, pat := range r.deny {
		if glob(pat, name) {
			return "backends." + backend + ".tools.deny", pat
		}
	}
	switch {
	case matchAny(r.approve, name):
		return "", ""
	case len(r.allow) > 0 && !matchAny(r.allow, name):
		return "backends." + backend + ".tools.allow", ""
	}
	return "", ""
}

// DeniedTo is the caller's own policy on the tools the configuration
// offers: for backend.tool, the server.auth.rules entry that keeps it
// from the principal ctx carries ("server.auth.rules.<rule>"), "" when
// none does or ctx carries no principal.
func (p *Policy) DeniedTo(ctx context.Context) func(backend, tool string) string {
	pr := authn.FromContext(ctx)
	return func(backend, tool string) string {
		if by, _, _ := p.principalDecision(pr, &Call{Backend: backend, Tool: tool}); by != "" {
			return "server.auth.rules." + by
		}
		return ""
	}
}

// DecidePrompt says whether a backend's prompt is listed and forwarded
// (Allowed or Denied): backends.<name>.prompts, or, without one, none of a
// backend whose tools are all denied.
func (p *Policy) DecidePrompt(backend, name string) Decision {
	r, ok := p.ruleSet()[backend]
	if !ok {
		return Allowed
	}
	return r.decideItem(r.prompts, fold(name))
}

// DecideResource says whether a backend's resource URI is listed and read
// (Allowed or Denied), as DecidePrompt does with backends.<name>.resources.
func (p *Policy) DecideResource(backend, uri string) Decision {
	r, ok := p.ruleSet()[backend]
	if !ok {
		return Allowed
	}
	return r.decideItem(r.resources, fold(uri))
}

// ResourceDenied reports whether backends.<name>.resources.deny names uri
// (a read through an allowed template is refused for it).
func (p *Policy) ResourceDenied(backend, uri string) bool {
	r, ok := p.ruleSet()[backend]
	return ok && matchAny(r.resources.deny, fold(uri))
}

// DecideTemplate says whether a backend's resource template is listed and
// serves reads (Allowed or Denied). A catch-all template (see
// [CatchAll]) is Denied unless backends.<name>.resources.allow names it:
// it would route reads of arbitrary URIs (file:///etc/passwd) to the
// backend.
func (p *Policy) DecideTemplate(backend, template string) Decision {
	r := p.ruleSet()[backend] // zero rules when unconfigured
	name := fold(template)
	if CatchAll(template) && !matchAny(r.resources.allow, name) {
		return Denied
	}
	return r.decideItem(r.resources, name)
}

// CatchAll reports whether a URI template can match URIs of any scheme:
// nothing but an expression comes before its scheme's ':' (such as
// "{+uri}" or "{scheme}://{+path}").
func CatchAll(template string) bool {
	brace := strings.IndexByte(template, '{')
	colon := strings.IndexByte(template, ':')
	return brace >= 0 && (colon < 0 || brace < colon)
}

func (r rules) decideItem(items itemRules, name string) Decision {
	switch {
	case matchAny(items.deny, name):
		return Denied
	case len(items.allow) > 0:
		if matchAny(items.allow, name) {
			return Allowed
		}
		return Denied
	case r.deniesAllTools && len(items.deny) == 0:
		return Denied
	}
	return Allowed
}

// Filter returns the tools of backend the policy offers (nil entries are
// kept out too). tools is not modified.
func (p *Policy) Filter(backend string, tools []*mcp.Tool) []*mcp.Tool {
	out := make([]*mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if t != nil && p.Decide(backend, t.Name) != Denied {
			out = append(out, t)
		}
	}
	return out
}

// PolicyStage refuses denied tools (TOOL_DENIED) and calls past the run's
// budget (TOOL_BUDGET), and marks calls that need approval.
func PolicyStage(p *Policy) Stage {
	return func(next Caller) Caller {
		return CallerFunc(func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
			switch p.Decide(c.Backend, c.Tool) {
			case Denied:
				rule, _ := p.DeniedBy(c.Backend, c.Tool)
				return nil, refuse(ctx, c, errorf(CodeToolDenied,
					"%s is not available: the configuration denies it (%s)", c.Name(), rule))
			case NeedsApproval:
				c.NeedsApproval = true
			}
			pr := authn.FromContext(ctx)
			deniedBy, approve, budget := p.principalDecision(pr, c)
			if deniedBy != "" {
				return nil, refuse(ctx, c, errorf(CodeToolDenied,
					"%s is not available to %s: server.auth.rules.%s denies it", c.Name(), pr.Name, deniedBy))
			}
			if approve {
				c.NeedsApproval = true
			}
			if run := RunFrom(ctx); run != nil {
				if !run.takeCall() {
					return nil, refuse(ctx, c, errorf(CodeToolBudget,
						"%s refused: this run already made its %d tool calls (sandbox.max_tool_calls)", c.Name(), run.MaxCalls))
				}
				if budget > 0 && run.made.Load() > int64(budget) {
					return nil, refuse(ctx, c, errorf(CodeToolBudget,
						"%s refused: this run already made the %d tool calls server.auth.rules allow %s", c.Name(), budget, pr.Name))
				}
			}
			return next.Call(ctx, c)
		})
	}
}

// approveKey is the configuration key that puts a backend's tools under
// approval.
func (p *Policy) approveKey(backend string) string {
	if p != nil {
		if r, ok := p.ruleSet()[backend]; ok {
			return r.approveKey
		}
	}
	return "backends." + backend + ".tools.approve"
}

// fold normalises a name for comparison: NFKC, invisible format characters
// removed, lower case.
func fold(s string) string {
	s = norm.NFKC.String(s)
	s = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	return strings.ToLower(s)
}

func foldAll(patterns []string) []string {
	out := make([]string, len(patterns))
	for i, p := range patterns {
		out[i] = fold(strings.TrimSpace(p))
	}
	return out
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if glob(p, name) {
			return true
		}
	}
	return false
}

// glob matches name against pattern: '*' is any run of characters, '?' one
// character, everything else itself.
func glob(pattern, name string) bool {
	p, n := []rune(pattern), []rune(name)
	pi, ni, star, mark := 0, 0, -1, 0
	for ni < len(n) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == n[ni]):
			pi++
			ni++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ni
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			ni = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
