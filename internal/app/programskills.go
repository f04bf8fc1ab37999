package app

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/programs"
	"github.com/isogate/isogate/internal/skills"
)

// programSkills is the skill source of saved programs: each program the
// caller may call (its own current version, or the version published to
// it) and its policy does not deny (server.auth.rules naming
// programs.<name>, as tools/list hides it) is served as a skill
// (skills.ProgramSkill) at skill://isogate/programs/<name>/. A store that
// cannot answer fails the source, so the skills request is refused with
// SKILLS_UNAVAILABLE rather than answered without them; a program that
// renders as no valid skill is left out and logged.
func programSkills(progs *programs.Programs, policy *pipeline.Policy, log *slog.Logger) skills.Source {
	// Versions never change once saved: each is read from the store and
	// rendered once (a listing of N programs is not N reads on Redis).
	var (
		mu       sync.Mutex
		rendered = map[string]skills.Skill{}
		bytes    int
	)
	return skills.SourceFunc(func(ctx context.Context, p *authn.Principal) ([]skills.Skill, error) {
		if p != nil {
			ctx = authn.WithPrincipal(ctx, p)
		}
		caller := programs.Caller{Principal: p}
		list, err := progs.List(ctx, caller)
		if err != nil {
			return nil, fmt.Errorf("listing saved programs: %w", err)
		}
		deniedTo := policy.DeniedTo(ctx)
		out := make([]skills.Skill, 0, len(list))
		for _, l := range list {
			if deniedTo(programs.PolicyBackend, l.Name) != "" {
				continue
			}
			key := l.Owner + "\x00" + l.Name + "@" + strconv.Itoa(l.Version)
			mu.Lock()
			sk, ok := rendered[key]
			mu.Unlock()
			if !ok {
				v, err := progs.Resolve(ctx, caller, l.Name)
				if err != nil {
					return nil, fmt.Errorf("reading saved program %s: %w", l.Name, err)
				}
				if sk, err = skills.ProgramSkill(skills.Program{Name: v.Name, Description: v.Description, Version: v.Version,
					Parameters: v.Params, Code: v.Code, Tool: programs.ToolName(v.Name)}); err != nil {
					log.Warn("saved program not served as a skill", "program", v.Ref(), "err", err)
					continue
				}
				n := skillBytes(sk)
				mu.Lock()
				if bytes+n > maxRenderedBytes {
					clear(rendered)
					bytes = 0
				}
				if _, dup := rendered[key]; !dup {
					rendered[key] = sk
					bytes += n
				}
				mu.Unlock()
			}
			out = append(out, sk)
		}
		return out, nil
	})
}

// maxRenderedBytes bounds the bytes of rendered program skills kept in
// memory; past it they are rendered again from the store.
const maxRenderedBytes = 16 << 20

// skillBytes is the size of sk's files.
func skillBytes(sk skills.Skill) int {
	n := 0
	for _, f := range sk.Files {
		n += len(f.Content)
	}
	return n
}
