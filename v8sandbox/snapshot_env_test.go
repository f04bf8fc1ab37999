package v8sandbox

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// snapshotEnvChild makes the test binary, started by
// TestSnapshotEnvTurnsTheSnapshotOff, report whether its pool's isolate
// started from the snapshot.
const snapshotEnvChild = "ISOGATE_TEST_SNAPSHOT_ENV_CHILD"

func TestSnapshotEnvTurnsTheSnapshotOff(t *testing.T) {
	if os.Getenv(snapshotEnvChild) != "" {
		p := NewPool(Options{Workers: 1})
		defer p.Close()
		if _, err := p.Run(context.Background(), Job{Source: "1 + 1"}, nil); err != nil {
			t.Fatal(err)
		}
		w := p.idle.take()
		t.Logf("fromSnapshot=%v", w.fromSnapshot)
		p.idle.put(w)
		return
	}
	for _, c := range []struct {
		env, want string
	}{{"", "fromSnapshot=true"}, {"off", "fromSnapshot=false"}} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestSnapshotEnvTurnsTheSnapshotOff$", "-test.v")
		cmd.Env = append(os.Environ(), snapshotEnvChild+"=1", SnapshotEnv+"="+c.env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s=%q: %v\n%s", SnapshotEnv, c.env, err, out)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("%s=%q: want %s in\n%s", SnapshotEnv, c.env, c.want, out)
		}
	}
}
