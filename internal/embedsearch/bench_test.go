package embedsearch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/testutil/fakeembed"
)

// benchWords make up the synthetic tools' descriptions.
var benchWords = strings.Fields(`create read write delete list search update move copy file directory
folder user people issue pull request branch commit repository message channel post image picture
web internet page map place location route entity relation graph memory note text content size
metadata permission owner label comment review merge tag release project team member account`)

// bigCatalog is a catalogue of n synthetic tools over 50 backends.
func bigCatalog(n int) *catalog.Catalog {
	r := rand.New(rand.NewPCG(1, 2))
	c := catalog.New()
	per := n / 50
	for b := range 50 {
		tools := make([]*mcp.Tool, per)
		for i := range per {
			desc := make([]string, 8)
			for j := range desc {
				desc[j] = benchWords[r.IntN(len(benchWords))]
			}
			tools[i] = tool(fmt.Sprintf("%s_%s_%d", benchWords[r.IntN(len(benchWords))], benchWords[r.IntN(len(benchWords))], i),
				strings.Join(desc, " ")+".", benchWords[r.IntN(len(benchWords))])
		}
		c.SetBackend(fmt.Sprintf("backend%d", b), nil, tools)
	}
	return c
}

// BenchmarkSearch5000: one search_tools ranking at 5 000 tools, lexical
// alone and fused with embeddings (the fake endpoint process on loopback:
// a hashed bag of words, not a model, so the figure is the gateway's cost
// plus one loopback HTTP round trip, not a model's inference), and the
// semantic ranking alone (one query vector against every tool's), side by
// side in one run. `go test -run XXX -bench Search5000 ./internal/embedsearch`.
func BenchmarkSearch5000(b *testing.B) {
	for _, dims := range []int{384, 1024} {
		ep := fakeembed.Start(b, fakeembed.Options{Model: testModel, Dims: dims})
		cat := bigCatalog(5000)
		sem := New(Options{Client: &Client{URL: ep.URL, Model: testModel}, Catalog: cat, QueryTimeout: time.Minute, BatchSize: 256})
		b.Cleanup(func() { sem.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		if err := sem.WaitReady(ctx); err != nil {
			b.Fatal(err)
		}
		cancel()
		queries := []string{"make a new folder", "find people on github", "search the internet for a topic", "add a comment to a pull request"}
		b.Run(fmt.Sprintf("lexical/dims=%d", dims), func(b *testing.B) {
			defer cpuPerOp(b)()
			i := 0
			for b.Loop() {
				cat.Search(queries[i%len(queries)], catalog.SearchOptions{})
				i++
			}
		})
		b.Run(fmt.Sprintf("fused/dims=%d", dims), func(b *testing.B) {
			defer cpuPerOp(b)()
			i := 0
			for b.Loop() {
				if _, notice := sem.Search(context.Background(), queries[i%len(queries)], catalog.SearchOptions{}); notice != "" {
					b.Fatal(notice)
				}
				i++
			}
		})
		set := sem.cur.Load()
		q, err := normalized(fakeembed.Vector(queries[0], dims))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("ranking-only/dims=%d", dims), func(b *testing.B) {
			defer cpuPerOp(b)()
			for b.Loop() {
				semanticRanking(set, q, "", minDepth)
			}
		})
	}
}

// cpuPerOp reports this process's CPU time (user and system, every
// goroutine) per operation as cpu-ns/op: on a machine other work loads, a
// CPU-bound loop's wall time is mostly waiting for a core, its CPU time
// is not. Call it before the loop and defer the function it returns.
func cpuPerOp(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
