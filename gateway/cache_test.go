package gateway

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
)

func removeCache(dir string) error { return os.RemoveAll(filepath.Join(dir, backend.CacheSubdir)) }

// TestCatalogueServedFromCacheBeforeBackendsConnect starts a gateway whose
// backend cannot connect yet and checks the cached tools are searchable.
func TestCatalogueServedFromCacheBeforeBackendsConnect(t *testing.T) {
	sleeper, marker := writeSleeper(t)
	h := newHarness(t, func(cfg *config.Config) {
		b := cfg.Backends["everything"]
		b.Env = map[string]string{"NODE_OPTIONS": "--require=" + sleeper}
		cfg.Backends["everything"] = b
	})
	if err := h.g.app.Backends.WaitHealthy(t.Context()); err != nil {
		t.Fatal(err)
	}
	dir := h.g.cfg.Server.CacheDir
	h.g.Close()
	if files, _ := filepath.Glob(filepath.Join(dir, backend.CacheSubdir, "*.json")); len(files) != 2 {
		t.Fatalf("cache files %v, want one per backend", files)
	}
	// Another configuration file in another place, same backend spec, but
	// now node waits 60s before starting the server (the marker exists).
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Server.CacheDir = dir
	cfg.Source = filepath.Join(t.TempDir(), "other.yaml")
	cfg.Backends = map[string]config.Backend{"everything": h.g.cfg.Backends["everything"]}
	g, err := build(cfg, app.Options{Runner: testPool(), StartWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.Start(t.Context())
	res := g.app.Catalog.Search("sum", searchOpts())
	if len(res.Hits) == 0 || res.Hits[0].Name != "everything.get-sum" {
		t.Fatalf("cached catalogue not searchable: %+v", res)
	}
	r := g.app.Engine.Execute(t.Context(), codeReq(`return await everything.get_sum({a: 1, b: 2})`))
	if !r.IsError || !contains(r.Text, `backend "everything" is still starting`) || !contains(r.Text, "isogate://backend/everything") {
		t.Fatalf("call during start: %s", r.Text)
	}
}

// writeSleeper returns a node --require script that blocks for 60s once
// the marker file exists.
func writeSleeper(t *testing.T) (script, marker string) {
	dir := t.TempDir()
	script, marker = filepath.Join(dir, "sleep.js"), filepath.Join(dir, "asleep")
	js := fmt.Sprintf("if (require('fs').existsSync(%q)) { const end = Date.now() + 60000; while (Date.now() < end) {} }\n", marker)
	os.WriteFile(script, []byte(js), 0o600)
	return script, marker
}
