package bench

import (
	"os"
	"runtime/pprof"
	"testing"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/codemode"
)

func TestZZProf(t *testing.T) {
	code := os.Getenv("ZZCODE")
	n := 30
	if os.Getenv("ZZN") == "big" {
		n = 3000
	}
	if os.Getenv("ZZN") != "" {
		n = 2000
	}
	g, err := benchGateway(t.Context(), config.IsolationThread, bigBackend())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	e := g.Engine()
	for range 5 {
		e.Execute(t.Context(), codemode.Request{Code: code})
	}
	f, _ := os.Create("/tmp/zz.prof")
	pprof.StartCPUProfile(f)
	for range n {
		if r := e.Execute(t.Context(), codemode.Request{Code: code}); r.IsError {
			t.Fatal(r.Text)
		}
	}
	pprof.StopCPUProfile()
}
