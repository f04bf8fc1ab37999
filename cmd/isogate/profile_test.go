package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCPUProfileOnlyForServe: ISOGATE_CPUPROFILE makes serve write a
// profile (gzip, as pprof writes) and leaves other commands, the workers
// among them, unprofiled.
func TestCPUProfileOnlyForServe(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args  []string
		wrote bool
	}{
		{[]string{"sandbox-worker"}, false},
		{[]string{"serve", "--config", "x.yaml"}, true},
	} {
		path := filepath.Join(dir, tc.args[0]+".prof")
		t.Setenv(cpuProfileEnv, path)
		var stderr bytes.Buffer
		startCPUProfile(tc.args, &stderr)()
		data, err := os.ReadFile(path)
		switch {
		case stderr.Len() > 0:
			t.Errorf("%s: %s", tc.args[0], stderr.String())
		case tc.wrote && (err != nil || !bytes.HasPrefix(data, []byte{0x1f, 0x8b})):
			t.Errorf("%s: no profile written (%v, %d bytes)", tc.args[0], err, len(data))
		case !tc.wrote && err == nil:
			t.Errorf("%s: a profile was written", tc.args[0])
		}
	}
}
