package authn

import "context"

// NameFromContext returns the name of the principal ctx carries, "" when
// it carries none (stdio, no auth: everyone is the same principal). It is
// a key, never a credential: for example v8sandbox.Job.Principal, which
// keeps each principal's programs on sandbox worker processes of its own.
func NameFromContext(ctx context.Context) string {
	if p := FromContext(ctx); p != nil {
		return p.Name
	}
	return ""
}
