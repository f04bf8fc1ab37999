package gateway

import (
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestBodyLimitMatchesTheDocs: the request body limit docs/security.md
// states is the one in force: a body of exactly that size is accepted, one
// byte more is answered 413 naming the limit.
func TestBodyLimitMatchesTheDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`body must arrive within \d+ s and stay\s+within (\d+) MiB`).FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/security.md does not state the request body limit")
	}
	mib, _ := strconv.Atoi(string(m[1]))
	limit := mib << 20
	h := newHTTPGateway(t, nil)
	// An initialize request of n bytes: padded with a field the server
	// ignores.
	request := func(n int) string {
		head := `{"_pad":"`
		rest := `",` + initializeBody[1:]
		return head + strings.Repeat("x", n-len(head)-len(rest)) + rest
	}
	for _, c := range []struct {
		size   int
		status int
	}{{limit, http.StatusOK}, {limit + 1, http.StatusRequestEntityTooLarge}} {
		resp, err := post(t, context.Background(), h.url, request(c.size), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Fatalf("a body of %d bytes (the docs say at most %d MiB): status %d, want %d: %.200s", c.size, mib, resp.StatusCode, c.status, body)
		}
		if c.status == http.StatusRequestEntityTooLarge && !strings.Contains(string(body), strconv.Itoa(limit)) {
			t.Fatalf("the 413 does not name the limit: %s", body)
		}
	}
}
