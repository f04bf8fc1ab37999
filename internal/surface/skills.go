package surface

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/skills"
)

// The Skills extension on isogate's servers (internal/skills): the
// capability, skills/list and skills/get, and the skill files in
// resources/list and resources/read: isogate's own skills (Parts.Skills)
// per principal, and each declaring backend's under skill://<backend>/.

// newSkills builds the skills service over the sources and the backends.
func (sf *Surface) newSkills(sources []skills.Source) *skills.Service {
	return skills.New(skills.Options{Sources: sources, Upstream: skillUpstream{sf}, Logger: sf.logger})
}

// installSkills declares the extension's methods on s and adds the
// middleware that lists and reads skill files; called before the
// middleware that puts the principal and the client's backend sessions
// in the context, so that it runs inside them.
func (sf *Surface) installSkills(s *mcp.Server) {
	if err := sf.skills.Install(s); err != nil {
		panic(err) // a programming error: the methods shadow standard ones
	}
	s.AddReceivingMiddleware(sf.skills.Middleware)
}

// skillCapabilities are the server capabilities' extensions: Skills.
func skillCapabilities() map[string]any {
	return map[string]any{skills.Extension: skills.Capability()}
}

// skillUpstream gives the skills service the backends, in the order that
// settles names they share, with the backends' resource policy.
type skillUpstream struct{ sf *Surface }

// Backends implements skills.Upstream.
func (u skillUpstream) Backends() []string {
	if u.sf.manager == nil {
		return nil
	}
	return u.sf.aggregate.naming.rank(u.sf.manager.Backends())
}

// Session implements skills.Upstream.
func (u skillUpstream) Session(ctx context.Context, backend string) (*mcp.ClientSession, error) {
	return u.sf.manager.Session(ctx, backend)
}

// Allowed implements skills.Upstream: backends.<name>.resources, as for
// the backend's other resources.
func (u skillUpstream) Allowed(backend, uri string) bool {
	return !isogateURI(uri) && u.sf.policy.DecideResource(backend, uri) != pipeline.Denied
}

// skillRead reads a skill file isogate serves (the handler of a backend's
// skill file registered under its prefix: the skills middleware answers
// such reads before it).
func (sf *Surface) skillRead(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	res, handled, err := sf.skills.Read(ctx, req.Params.URI)
	if !handled && err == nil {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	return res, err
}
