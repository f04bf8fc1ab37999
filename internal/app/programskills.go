package app

import (
	"context"
	"fmt"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/programs"
	"github.com/isogate/isogate/internal/skills"
)

// programSkills is the skills source of saved programs (issue 45): each
// program the principal may call, as tools/list lists it (its own current
// version, or the version published to it; none its rules deny), served
// as the skill programs/<name> with its SKILL.md and program.ts.
func programSkills(ps *programs.Programs, policy *pipeline.Policy) skills.Source {
	return skills.SourceFunc(func(ctx context.Context, p *authn.Principal) ([]skills.Skill, error) {
		if p != nil {
			ctx = authn.WithPrincipal(ctx, p)
		}
		caller := programs.Caller{Principal: p}
		list, err := ps.List(ctx, caller)
		if err != nil {
			return nil, fmt.Errorf("saved programs: %w", err)
		}
		deniedTo := policy.DeniedTo(ctx)
		out := make([]skills.Skill, 0, len(list))
		for _, l := range list {
			if deniedTo(programs.PolicyBackend, l.Name) != "" {
				continue
			}
			v, err := ps.Resolve(ctx, caller, l.Name)
			if err != nil {
				return nil, fmt.Errorf("saved program %s: %w", l.Name, err)
			}
			sk, err := skills.ProgramSkill(skills.Program{Name: v.Name, Description: v.Description, Version: v.Version,
				Parameters: v.Params, Code: v.Code, Tool: programs.ToolName(v.Name)})
			if err != nil {
				return nil, fmt.Errorf("saved program %s: %w", l.Name, err)
			}
			out = append(out, sk)
		}
		return out, nil
	})
}
