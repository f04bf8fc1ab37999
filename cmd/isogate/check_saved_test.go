package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/internal/programs"
)

// savedAs vets nothing: the programs were saved against another
// catalogue (the test writes the store as it was then); calls names the
// tools of each program's plan.
type savedAs struct{ calls map[string][]string }

func (s savedAs) Vet(_ context.Context, _, code string) (*programs.Vetting, error) {
	return &programs.Vetting{Calls: s.calls[code]}, nil
}

// saveInto writes programs (name → code) into the bbolt store of dir.
func saveInto(t *testing.T, dir string, vet savedAs, progs map[string]string) {
	t.Helper()
	store, err := kv.OpenBolt(kv.BoltOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := programs.New(programs.Options{Store: store, Vet: vet})
	for name, code := range progs {
		if _, err := p.Save(context.Background(), programs.Caller{}, programs.SaveInput{Name: name, Description: "d", Code: code}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckSavedExitCodes runs `isogate check --saved` as CI would, on
// saved programs in store.data_dir against the real server-everything: a
// program saved when get_sum took bb is printed stale with the checker's
// fix and exits 1, the store left unmarked; a program calling a backend
// that does not connect cannot be judged: exit 2; all checking: exit 0.
func TestCheckSavedExitCodes(t *testing.T) {
	const (
		ok      = `return await everything.get_sum({ a: 1, b: 2 })`
		drifted = `return await everything.get_sum({ a: 1, bb: 2 })`
		down    = `return await broken.anything({})`
	)
	vet := savedAs{calls: map[string][]string{ok: {"everything.get-sum"}, drifted: {"everything.get-sum"}, down: {"broken.anything"}}}
	check := func(progs map[string]string, extraBackend string, args ...string) (string, string, int) {
		t.Helper()
		data := t.TempDir()
		saveInto(t, data, vet, progs)
		cfg := writeConfig(t, fmt.Sprintf("store:\n  data_dir: %s\n", data))
		if extraBackend != "" {
			patchConfig(t, cfg, "backends:\n", "backends:\n"+extraBackend)
		}
		out, errOut, code := runBinary(t, "", append([]string{"check", "--saved", "--config", cfg, "--log-level", "error", "--wait", "20s"}, args...)...)
		if strings.Contains(out+errOut, "STORE_UNAVAILABLE") {
			t.Fatalf("the store did not answer: %s", errOut)
		}
		store, err := kv.OpenBolt(kv.BoltOptions{Dir: data})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		if st, err := programs.New(programs.Options{Store: store, Vet: vet}).Stale(context.Background()); err != nil || len(st) != 0 {
			t.Errorf("check --saved marked the store: %v %v", st, err)
		}
		return out, errOut, code
	}

	out, errOut, code := check(map[string]string{"sum_ok": ok, "sum_drifted": drifted}, "")
	if code != 1 || !strings.Contains(out, "stale: local/sum_drifted@1 (TYPECHECK_FAILED)\n") ||
		!strings.Contains(out, "`bb` is not a parameter of everything.get_sum; did you mean `b`?") ||
		strings.Contains(out, "sum_ok") || !strings.Contains(out, "2 saved version(s): 2 checked, 1 stale, 0 not checked") {
		t.Fatalf("stale: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code = check(map[string]string{"sum_drifted": drifted}, "", "--json")
	var rep savedReport
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Stale) != 1 || rep.Stale[0].Ref() != "local/sum_drifted@1" ||
		!strings.Contains(rep.Stale[0].Diagnostics, "did you mean `b`") {
		t.Fatalf("--json: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code = check(map[string]string{"sum_ok": ok, "via_broken": down}, "  broken:\n    command: "+filepath.Join(t.TempDir(), "absent")+"\n")
	// The count says how many versions there are and how many were
	// judged: it read "1 saved version(s) checked: 0 stale, 1 not
	// checked" for two versions (tryout).
	if code != 2 || !strings.Contains(out, "not checked: local/via_broken@1: backend broken is not connected") ||
		!strings.Contains(out, "2 saved version(s): 1 checked, 0 stale, 1 not checked") {
		t.Fatalf("a backend down: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if out, errOut, code = check(map[string]string{"sum_ok": ok}, ""); code != 0 || !strings.Contains(out, "1 saved version(s): 1 checked, 0 stale") {
		t.Fatalf("clean: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if _, errOut, code = check(nil, "", "prog.ts"); code != 2 {
		t.Fatalf("--saved with a program: exit %d %s", code, errOut)
	}
}

// patchConfig replaces old by new once in the file at path.
func patchConfig(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), old) {
		t.Fatalf("%s has no %q (%v)", path, old, err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCheckSavedStoreHeld: `isogate check --saved` on a data directory
// whose bbolt file another process holds (as a running gateway does) says
// so, and how to check the saved programs then, instead of advising to try
// again in a few seconds, which cannot help; exit 2 like other store
// failures.
func TestCheckSavedStoreHeld(t *testing.T) {
	data := t.TempDir()
	saveInto(t, data, savedAs{}, map[string]string{"sum_ok": `return 1`})
	held, err := kv.OpenBolt(kv.BoltOptions{Dir: data}) // this process holds the file, as a gateway would
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	cfg := writeConfig(t, fmt.Sprintf("store:\n  data_dir: %s\n", data))
	out, errOut, code := runBinary(t, "", "check", "--saved", "--config", cfg, "--log-level", "error", "--wait", "1s")
	if code != 2 || !strings.Contains(errOut, "STORE_UNAVAILABLE") || !strings.Contains(errOut, "a running gateway holds the store") ||
		!strings.Contains(errOut, "/readyz") || !strings.Contains(errOut, "stop it") || strings.Contains(errOut, "try again in a few seconds") {
		t.Fatalf("held store: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
