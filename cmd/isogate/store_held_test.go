package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/kv"
)

// TestSecondGatewayOnOneDataDirIsVisible: two gateways (the real binary)
// on one store.data_dir. The first holds the bbolt file; the second
// cannot open it, and says so: its /readyz reports the store down (not
// unready: storeReadiness says why), isogate_store_up{store="kv"} is 0,
// and isogate doctor on that configuration names the store as a problem
// (exit 1). The first reports its store up. Before, the second's calls
// failed with STORE_UNAVAILABLE while /readyz, the metrics and doctor
// showed nothing.
func TestSecondGatewayOnOneDataDirIsVisible(t *testing.T) {
	data := t.TempDir()
	b, err := kv.OpenBolt(kv.BoltOptions{Dir: data}) // the file, as a first save makes it
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	cfg := writeConfig(t, "store:\n  data_dir: "+data+"\n")

	first := strings.TrimSuffix(startHTTP(t, cfg), "/mcp")
	if st := readyStore(t, first); !st.Up {
		t.Fatalf("the first gateway's store is down: %+v", st)
	}
	second := strings.TrimSuffix(startHTTP(t, cfg), "/mcp")
	st := readyStore(t, second)
	if st.Up || !strings.Contains(st.Error, "held by another process") {
		t.Errorf("the second gateway's /readyz store: %+v, want down, held by another process", st)
	}
	if m := get(t, second+"/metrics"); !strings.Contains(m, `isogate_store_up{store="kv"} 0`) {
		t.Errorf("the second gateway's metrics lack isogate_store_up{store=\"kv\"} 0:\n%s", grepLines(m, "isogate_store_up"))
	}
	if m := get(t, first+"/metrics"); !strings.Contains(m, `isogate_store_up{store="kv"} 1`) {
		t.Errorf("the first gateway's metrics lack isogate_store_up{store=\"kv\"} 1:\n%s", grepLines(m, "isogate_store_up"))
	}
	out, stderr, code := runBinary(t, "", "doctor", "--config", cfg, "--json", "--wait", "1s")
	var rep struct {
		Store    string   `json:"store"`
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s\n%s", err, out, stderr)
	}
	if code != 1 || !strings.Contains(rep.Store, "held by another process") || !strings.Contains(strings.Join(rep.Problems, "\n"), "store: ") {
		t.Errorf("doctor exit %d, store %q, problems %q: want exit 1 naming the held store", code, rep.Store, rep.Problems)
	}
}

// readyStore reads the store detail of a gateway's /readyz.
func readyStore(t *testing.T, base string) (st struct {
	Up    bool   `json:"up"`
	Error string `json:"error"`
}) {
	t.Helper()
	var body struct {
		Store *struct {
			Up    bool   `json:"up"`
			Error string `json:"error"`
		} `json:"store"`
	}
	if err := json.Unmarshal([]byte(get(t, base+"/readyz")), &body); err != nil || body.Store == nil {
		t.Fatalf("/readyz: no store detail (%v)", err)
	}
	st.Up, st.Error = body.Store.Up, body.Store.Error
	return st
}

// get returns the body of a GET of url.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
