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
	if err := goBuild(ctx, root, "./cmd/isogate", bin); err != nil {
		return "", err
	}
	isogateBuilds.bins[root] = bin
	return bin, nil
}

// goBuild builds the command pkg of the module in dir ("" the working
// directory) into out; a failure carries the compiler's output.
func goBuild(ctx context.Context, dir, pkg, out string) error {
	build := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	build.Dir = dir
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %w: %s", pkg, err, b)
	}
	return nil
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
