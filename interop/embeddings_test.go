package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/testutil/fakeembed"
)

// TestTypeScriptSDKSearchEmbeddings: a stdio gateway configured with
// search.embeddings (the fake endpoint process: a hashed bag of words with
// synonym classes, not a model) answers the official TypeScript SDK
// client's search_tools with the fused ranking once its tool vectors are
// ready: "addition" finds everything.get-sum (whose words are sum and
// numbers; no word of it matches), "show me a picture"
// everything.get-tiny-image (words alone rank get-annotated-message first),
// with no notice; before
// that, any answer ranked by words only says so on its last line.
func TestTypeScriptSDKSearchEmbeddings(t *testing.T) {
	t.Parallel()
	ep := fakeembed.Start(t, fakeembed.Options{Model: "fake-bow"})
	dir := t.TempDir()
	cfg := fmt.Sprintf(`backends:
  everything:
    command: node
    args: [%q, stdio]
search:
  embeddings:
    url: %q
    model: fake-bow
    timeout: 30s
`, filepath.Join(repoRoot, "examples", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), ep.URL)
	file := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		IsError bool
		Text    string
	}
	var r struct {
		First   answer
		Tries   int
		Answers map[string]answer
	}
	runNodeInto(t, &r, "search_embeddings.mjs", "--queries", "addition,show me a picture", "--stdio", binary, "serve", "--config", file)
	if strings.Contains(r.First.Text, "Ranked by words only") && !strings.HasSuffix(strings.TrimSpace(r.First.Text),
		"Ranked by words only: tool embeddings are still being computed.") {
		t.Errorf("an answer before the vectors were ready:\n%s", r.First.Text)
	}
	for q, want := range map[string]string{"addition": "everything.get-sum", "show me a picture": "everything.get-tiny-image"} {
		a := r.Answers[q]
		lines := strings.Split(a.Text, "\n")
		if a.IsError || len(lines) < 2 || !strings.HasPrefix(lines[1], want+" ") || strings.Contains(a.Text, "Ranked by words only") {
			t.Errorf("search_tools %q after %d tries: want %s first, fused:\n%s", q, r.Tries, want, a.Text)
		}
	}
}
