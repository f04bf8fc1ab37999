package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/testutil"
)

// TestMain gives the gateways the suite starts (hermeticEnv inherits it)
// an $XDG_DATA_HOME of their own: never the developer's.
func TestMain(m *testing.M) {
	dataHome, err := testutil.DataHome()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dataHome)
	os.Exit(code)
}

// TestGatewaysGetADataDirOfTheirOwn: the environment the gateways this
// package starts get (hermeticEnv) puts their default store.data_dir in a
// temporary directory of the tests, not the developer's
// ~/.local/share/isogate, whose saved programs they would list.
func TestGatewaysGetADataDirOfTheirOwn(t *testing.T) {
	home := ""
	for _, kv := range hermeticEnv() {
		if v, ok := strings.CutPrefix(kv, "XDG_DATA_HOME="); ok {
			home = v
		}
	}
	if !strings.HasPrefix(home, filepath.Clean(os.TempDir())+string(filepath.Separator)) {
		t.Fatalf("the gateways' $XDG_DATA_HOME is %q, not a directory of the tests' (default store.data_dir %s)", home, config.Default().Store.DataDir)
	}
}
