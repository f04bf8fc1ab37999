package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/backend"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errCaller answers every call with one error.
type errCaller struct{ err error }

func (c errCaller) CallTool(context.Context, string, string, json.RawMessage) (*mcp.CallToolResult, error) {
	return nil, c.err
}

// TestHintsFollowCodesNotText proves that backend hints switch on the
// error's code: the same code under any message text gives the same hint,
// and a code-less error whose text reads like a backend failure gives none.
func TestHintsFollowCodesNotText(t *testing.T) {
	const prog = `return await everything.get_sum({a: 1, b: 2})`
	f := newFixture(t, Options{})
	for _, c := range []struct {
		sentinel error
		hint     string
	}{
		{backend.ErrStarting, "has not finished connecting"},
		{backend.ErrTimeout, "backends.everything.timeout"},
		{backend.ErrUnavailable, "Backend `everything` is unavailable"},
		{backend.ErrConnectionLost, "Backend `everything` is unavailable"},
	} {
		for _, text := range []string{"opaque words", "something else entirely"} {
			f.engine.opts.Caller = errCaller{fmt.Errorf("%s: %w", text, c.sentinel)}
			f.fails(t, prog, c.hint)
		}
	}
	f.engine.opts.Caller = errCaller{errors.New(`backend "everything" is unavailable: backend "everything" did not answer within 1s`)}
	if r := f.fails(t, prog); strings.Contains(r.Text, "isogate://backend/") || strings.Contains(r.Text, "backends.everything.timeout") {
		t.Fatalf("a code-less error got a backend hint: %s", r.Text)
	}
}
