package v8sandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// snapshotShareChild makes the test binary, started by
// TestStartupSnapshotHandedToAnotherProcess, start its isolates from the
// blob in the file it names, then report.
const snapshotShareChild = "ISOGATE_TEST_SNAPSHOT_SHARE_CHILD"

// childSnapshotErr is what UseStartupSnapshot answered in such a child.
var childSnapshotErr error

// takeChildSnapshot, called by TestMain before any isolate is made, gives
// a child its parent's blob.
func takeChildSnapshot() {
	if path := os.Getenv(snapshotShareChild); path != "" {
		blob, err := os.ReadFile(path)
		if err == nil {
			err = UseStartupSnapshot(blob)
		}
		childSnapshotErr = err
	}
}

// A process of the same binary starts its isolates from the blob another
// one made, without making the snapshot itself, and runs programs that use
// the bootstrap; a blob of another build (its key altered) is refused, and
// that process makes its own.
func TestStartupSnapshotHandedToAnotherProcess(t *testing.T) {
	if os.Getenv(snapshotShareChild) != "" {
		if err := childSnapshotErr; err != nil {
			t.Logf("refused: %v", err)
		}
		p := NewPool(Options{Workers: 1})
		defer p.Close()
		res, err := p.Run(context.Background(), Job{
			Source:      `(async () => { const r = await api.echo({n: 2}); return [r[0].n * 21, typeof __isogate_bootstrap] })()`,
			AwaitResult: true, Functions: []Function{{Name: "api.echo", Async: true}}},
			HostFunc(func(_ context.Context, _ string, args json.RawMessage) (json.RawMessage, error) { return args, nil }))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("result=%s made=%d", res.Value, snapshotsMade.Load())
		return
	}
	blob := StartupSnapshot()
	if len(blob) == 0 {
		t.Fatal("no startup snapshot")
	}
	if again := StartupSnapshot(); string(again) != string(blob) {
		t.Fatal("a second StartupSnapshot differs from the first")
	}
	dir := t.TempDir()
	other := append([]byte(nil), blob...)
	other[0] ^= 1
	for _, c := range []struct {
		name string
		blob []byte
		want []string
	}{
		{"same build", blob, []string{`result=[42,"undefined"] made=0`}},
		{"another build", other, []string{"refused: the startup snapshot was made by another build", `result=[42,"undefined"] made=1`}},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		if err := os.WriteFile(path, c.blob, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run", "^TestStartupSnapshotHandedToAnotherProcess$", "-test.v")
		cmd.Env = append(os.Environ(), snapshotShareChild+"="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: want %s in\n%s", c.name, w, out)
			}
		}
	}
}
