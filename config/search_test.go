package config

import (
	"strings"
	"testing"
	"time"
)

// TestSearchEmbeddingsConfig: search.embeddings loads from a file with
// ${VAR} in the URL and header values, and its problems are reported by
// key: a URL without a model, a URL that is not http(s), a header name or
// value that cannot be sent, bounds, an unset variable.
func TestSearchEmbeddingsConfig(t *testing.T) {
	path := writeConfig(t, "isogate.yaml", `
search:
  embeddings:
    url: ${EMBED_URL}
    model: nomic-embed-text
    headers: {Authorization: "Bearer ${EMBED_KEY}"}
    dimensions: 256
`)
	cfg, err := Load(LoadOptions{Path: path, Environ: testEnv(t, "EMBED_URL=http://127.0.0.1:11434/v1", "EMBED_KEY=k")})
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Search.Embeddings
	if e.URL != "http://127.0.0.1:11434/v1" || e.Headers["Authorization"] != "Bearer k" || e.Dimensions != 256 ||
		e.Timeout != time.Second || e.BatchSize != 32 {
		t.Errorf("search.embeddings = %+v", e)
	}

	bad := writeConfig(t, "bad.yaml", `
search:
  embeddings:
    url: "ftp://example.com/embed"
    headers: {"Bad Header": x, X-Key: "${UNSET_EMBED_KEY}"}
    dimensions: -1
    timeout: 2m
    batch_size: 0
`)
	_, err = Load(LoadOptions{Path: bad, Environ: testEnv(t)})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"search.embeddings.url:", "search.embeddings.model: required with search.embeddings.url",
		`search.embeddings.headers."Bad Header"`, "search.embeddings.headers.X-Key: environment variable UNSET_EMBED_KEY is not set",
		"search.embeddings.dimensions:", "search.embeddings.timeout:", "search.embeddings.batch_size:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no problem %q in:\n%v", want, err)
		}
	}
}
