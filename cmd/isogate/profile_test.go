package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestProfilesOnlyForServe: ISOGATE_CPUPROFILE and ISOGATE_TRACE make serve
// write a CPU profile (gzip, as pprof writes) and an execution trace (its
// "go 1.N trace" header), and leave other commands, the workers among
// them, unprofiled.
func TestProfilesOnlyForServe(t *testing.T) {
	dir := t.TempDir()
	kinds := []struct {
		env    string
		header []byte
	}{{cpuProfileEnv, []byte{0x1f, 0x8b}}, {traceEnv, []byte("go 1.")}}
	for _, tc := range []struct {
		args  []string
		wrote bool
	}{
		{[]string{"sandbox-worker"}, false},
		{[]string{"serve", "--config", "x.yaml"}, true},
	} {
		for _, p := range kinds {
			path := filepath.Join(dir, tc.args[0]+p.env)
			t.Setenv(p.env, path)
		}
		var stderr bytes.Buffer
		startProfiles(tc.args, &stderr)()
		for _, p := range kinds {
			data, err := os.ReadFile(filepath.Join(dir, tc.args[0]+p.env))
			switch {
			case stderr.Len() > 0:
				t.Errorf("%s: %s", tc.args[0], stderr.String())
			case tc.wrote && (err != nil || !bytes.HasPrefix(data, p.header)):
				t.Errorf("%s: no %s written (%v, %d bytes)", tc.args[0], p.env, err, len(data))
			case !tc.wrote && err == nil:
				t.Errorf("%s: %s was written", tc.args[0], p.env)
			}
		}
	}
}
