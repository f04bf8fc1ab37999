package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDoctorChecksSearchEmbeddings: `isogate doctor` (the real binary)
// with search.embeddings set waits for the tool vectors: an endpoint that
// refuses connections is a problem (exit 1) naming search embeddings and
// the endpoint's failure; a working endpoint (real HTTP, OpenAI-shaped
// answers) reports ok and exits 0. Before, doctor said "no problems found"
// with the endpoint down while every search fell back to words.
func TestDoctorChecksSearchEmbeddings(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + closed.Addr().String() + "/v1/embeddings"
	closed.Close() // nothing listens there now
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		out := struct {
			Data []item `json:"data"`
		}{}
		for i, in := range req.Input {
			out.Data = append(out.Data, item{Index: i, Embedding: []float64{1, float64(len(in)), float64(i + 1)}})
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(up.Close)

	for _, c := range []struct {
		name, url string
		exit      int
		want      string
	}{
		{"down", down, 1, "search embeddings: tool vectors not computed"},
		{"up", up.URL + "/v1/embeddings", 0, `"search_embeddings": "ok"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := writeConfig(t, fmt.Sprintf("search:\n  embeddings:\n    url: %s\n    model: m\n", c.url))
			out, stderr, code := runBinary(t, "", "doctor", "--config", cfg, "--json")
			if code != c.exit || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d, want %d; stdout lacks %q:\n%s\nstderr:\n%s", code, c.exit, c.want, out, stderr)
			}
		})
	}
}
