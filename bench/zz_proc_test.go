package bench

import (
	"slices"
	"testing"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/codemode"
)

func TestZZProc(t *testing.T) {
	g, err := benchGateway(t.Context(), config.IsolationProcess, bigBackend())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	e := g.Engine()
	var s []time.Duration
	for range 200 {
		time.Sleep(5 * time.Millisecond)
		t0 := time.Now()
		e.Execute(t.Context(), codemode.Request{Code: "const x = 1;\nreturn x"})
		s = append(s, time.Since(t0))
	}
	slices.Sort(s)
	t.Logf("process trivial p50 %v", s[len(s)/2])
}
