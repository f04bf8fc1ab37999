package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/testutil"
)

// TestPlainNameWaitsForTheBackendFirstInTheFile: two backends offer
// "whoami"; the one first in the file ("first") is still starting, its
// tools unknown, when the other ("second") has connected, so the plain
// name is listed for second. A call by the plain name made then waits for
// first and reaches it (bare), or, in auto, where the name is now prefixed
// on both, reaches neither and says which names to call. Without the wait
// the call reached second: in bare mode, the wrong backend.
func TestPlainNameWaitsForTheBackendFirstInTheFile(t *testing.T) {
	for _, mode := range []config.ToolNames{config.ToolNamesBare, config.ToolNamesAuto} {
		t.Run(string(mode), func(t *testing.T) {
			cfg := config.Default()
			cfg.Server.CacheDir = t.TempDir()
			cfg.Server.Expose = config.ExposeBoth
			cfg.Server.ToolNames = mode
			cfg.Sandbox.Isolation, cfg.Sandbox.TrustedCode = config.IsolationThread, true
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			server := func(name string) *mcp.Server {
				s := mcp.NewServer(&mcp.Implementation{Name: name}, nil)
				mcp.AddTool(s, &mcp.Tool{Name: "whoami"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return textResult(name, false), nil, nil
				})
				return s
			}
			release := make(chan struct{})
			dialed := make(chan struct{}, 16)
			first := backend.InMemory("first", server("first"))
			dialFirst := first.Dial
			first.Dial = func(ctx context.Context) (mcp.Transport, error) {
				dialed <- struct{}{}
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return dialFirst(ctx)
			}
			g := startGateway(t, cfg, app.Options{Runner: testPool(), StartWait: time.Minute,
				ExtraSpecs: []backend.Spec{first, backend.InMemory("second", server("second"))}})
			cs := connect(t, g, nil)
			<-dialed
			testutil.Eventually(t, 30*time.Second, func() bool {
				res, err := cs.ListTools(context.Background(), nil)
				if err != nil {
					return false
				}
				for _, tool := range res.Tools {
					if tool.Name == "whoami" {
						return true
					}
				}
				return false
			}, "second's whoami to be listed under the plain name")

			type answer struct {
				text string
				err  error
			}
			done := make(chan answer, 1)
			go func() {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami"})
				if err != nil {
					done <- answer{err: err}
					return
				}
				done <- answer{text: resultText(res)}
			}()
			// The call must not be answered while first is starting.
			select {
			case a := <-done:
				t.Fatalf("the plain name was answered while first was starting: %q %v", a.text, a.err)
			case <-time.After(200 * time.Millisecond):
			}
			close(release)
			a := <-done
			if a.err != nil {
				t.Fatal(a.err)
			}
			switch mode {
			case config.ToolNamesBare:
				if a.text != "first" {
					t.Errorf("bare whoami reached %q, want first (first in the file)", a.text)
				}
			case config.ToolNamesAuto:
				if !strings.Contains(a.text, "first__whoami") || !strings.Contains(a.text, "second__whoami") {
					t.Errorf("auto whoami, now shared, answered %q; want the prefixed names", a.text)
				}
			}
		})
	}
}

// resultText joins a result's text contents.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
