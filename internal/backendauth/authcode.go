package backendauth

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/oauth2"
)

// refreshStored returns the login's token, refreshed (authorization_code).
// Filled in by the login step.
func (a *Authorizer) refreshStored(ctx context.Context) (*oauth2.Token, error) {
	return nil, fmt.Errorf("%w: run `isogate login %s`", errors.New("no stored token"), a.opts.Backend)
}
