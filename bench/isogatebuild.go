package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// isogateBuilds are the isogate binaries buildIsogate made in this
// process, one per module root, in one temporary directory.
var isogateBuilds struct {
	sync.Mutex
	dir  string
	bins map[string]string
}

// buildIsogate returns root's ./cmd/isogate built, building it on the
// first call for root only: the sections and tests that serve a gateway
// share one build (each link of the binary took seconds). [RemoveBuilds]
// removes it.
func buildIsogate(ctx context.Context, root string) (string, error) {
	isogateBuilds.Lock()
	defer isogateBuilds.Unlock()
	if bin, ok := isogateBuilds.bins[root]; ok {
		return bin, nil
	}
	if isogateBuilds.dir == "" {
		dir, err := os.MkdirTemp("", "isogate-bench-bin-")
		if err != nil {
			return "", fmt.Errorf("building isogate: %w", err)
		}
		isogateBuilds.dir, isogateBuilds.bins = dir, map[string]string{}
	}
	bin := filepath.Join(isogateBuilds.dir, fmt.Sprintf("isogate-%d", len(isogateBuilds.bins)))
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/isogate")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building isogate: %v: %s", err, out)
	}
	isogateBuilds.bins[root] = bin
	return bin, nil
}

// RemoveBuilds removes the isogate binaries the report built; a later
// section builds again.
func RemoveBuilds() {
	isogateBuilds.Lock()
	defer isogateBuilds.Unlock()
	if isogateBuilds.dir != "" {
		os.RemoveAll(isogateBuilds.dir)
	}
	isogateBuilds.dir, isogateBuilds.bins = "", nil
}
