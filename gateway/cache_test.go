package gateway

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/gateway/backend"
)

func removeCache(dir string) error { return os.Remove(filepath.Join(dir, backend.CacheFileName)) }

// TestCatalogueServedFromCacheBeforeBackendsConnect starts a gateway whose
// backend cannot connect yet and checks the cached tools are searchable.
func TestCatalogueServedFromCacheBeforeBackendsConnect(t *testing.T) {
	h := newHarness(t, nil)
	dir := h.g.cfg.Server.CacheDir
	h.g.Close()
	if _, err := os.Stat(filepath.Join(dir, backend.CacheFileName)); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	cfg := config.Default()
	cfg.Server.CacheDir = dir
	// Same spec as the harness's, but node waits 60s before starting the server.
	cfg.Backends = map[string]config.Backend{"everything": {Name: "everything", Transport: config.TransportStdio,
		Command: "node", Args: []string{everythingPath(t), "stdio"}, Timeout: 10 * time.Second, MaxConcurrentCalls: 8,
		Env: map[string]string{"NODE_OPTIONS": "--require=" + writeSleeper(t)}}}
	g, err := New(cfg, Options{Runner: testPool(), StartWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.Start(t.Context())
	res := g.Catalog().Search("sum", searchOpts())
	if len(res.Hits) == 0 || res.Hits[0].Name != "everything.get-sum" {
		t.Fatalf("cached catalogue not searchable: %+v", res)
	}
	r := g.Engine().Execute(t.Context(), codeReq(`return await everything.get_sum({a: 1, b: 2})`))
	if !r.IsError || !contains(r.Text, `backend "everything" is still starting`) || !contains(r.Text, "isogate://backend/everything") {
		t.Fatalf("call during start: %s", r.Text)
	}
}

func writeSleeper(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "sleep.js")
	os.WriteFile(p, []byte("const end = Date.now() + 60000; while (Date.now() < end) {}\n"), 0o600)
	return p
}
