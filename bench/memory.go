package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
)

// MemoryMeasurement is the memory a variant needs per sandbox.
type MemoryMeasurement struct {
	Variant string
	// N is the number of sandboxes (isolates or runtimes) held at once.
	N int
	// InFlightRSS is the growth of resident memory (this process plus its
	// child processes) per sandbox while N runs are in flight at once.
	InFlightRSS float64
	// InFlightGoHeap is the growth of the Go heap (HeapInuse) per sandbox
	// at that moment: where goja keeps its JavaScript heap.
	InFlightGoHeap float64
	// IdleRSS is the growth of resident memory per sandbox after the runs
	// ended, with the variant still open (warm isolates stay resident;
	// goja runtimes are garbage).
	IdleRSS float64
	Err     string
}

// MeasureMemory builds the variant with n workers, holds n runs in flight
// at once (each waits on a shared barrier inside a host call), and reports
// the memory growth per sandbox. Measurements of the same process are
// noisy: run it on a quiet process, before other measurements grow heaps.
func MeasureMemory(ctx context.Context, spec VariantSpec, n int, cfg VariantConfig) MemoryMeasurement {
	m := MemoryMeasurement{Variant: spec.Name, N: n}
	cfg.Workers = n
	rss0, heap0 := settledMemory()

	v, err := spec.New(cfg)
	if err != nil {
		m.Err = err.Error()
		return m
	}
	defer v.Close()

	b := newBarrier(n)
	w := &Workload{
		Name:   "memory-barrier",
		Source: "const scratch = Array.from({ length: 100 }, (_, i) => ({ i, s: String(i) }));\nawait hold();\nreturn scratch.length;",
		Tools:  []Tool{{Name: "hold", Call: b.wait}},
		Want:   "100",
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			got, err := v.Run(ctx, w)
			if err == nil {
				err = w.Check(got)
			}
			errs <- err
		})
	}
	select {
	case <-b.full:
	case err := <-errs:
		b.release()
		wg.Wait()
		m.Err = fmt.Sprintf("a run ended before the barrier: %v", err)
		return m
	case <-ctx.Done():
		b.release()
		wg.Wait()
		m.Err = "timed out waiting for the runs to reach the barrier"
		return m
	}
	rss1, heap1 := settledMemory()
	b.release()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			m.Err = err.Error()
			return m
		}
	}
	rss2, _ := settledMemory()
	m.InFlightRSS = float64(rss1-rss0) / float64(n)
	m.InFlightGoHeap = float64(heap1-heap0) / float64(n)
	m.IdleRSS = float64(rss2-rss0) / float64(n)
	return m
}

// settledMemory collects garbage and returns resident memory (this process
// and its descendants) and the Go heap in use.
func settledMemory() (rss, heap int64) {
	runtime.GC()
	debug.FreeOSMemory()
	time.Sleep(50 * time.Millisecond)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return TreeRSS(), int64(ms.HeapInuse)
}

// barrier lets n host calls wait for each other.
type barrier struct {
	n       int
	mu      sync.Mutex
	arrived int
	full    chan struct{}
	open    chan struct{}
	once    sync.Once
}

func newBarrier(n int) *barrier {
	return &barrier{n: n, full: make(chan struct{}), open: make(chan struct{})}
}

func (b *barrier) wait(json.RawMessage) (json.RawMessage, error) {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.full)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
		return nil, nil
	case <-time.After(time.Minute):
		return nil, fmt.Errorf("barrier timed out")
	}
}

func (b *barrier) release() { b.once.Do(func() { close(b.open) }) }

// TreeRSS returns the resident memory of this process and all its
// descendants in bytes (Linux /proc; elsewhere only what is known).
func TreeRSS() int64 {
	total, _ := treeRSS()
	return total
}

// treeRSS returns the resident memory of this process and all its
// descendants in bytes, and how many processes that is.
func treeRSS() (total int64, procs int) {
	self := os.Getpid()
	kids := descendants(self)
	total = statusRSS(strconv.Itoa(self))
	for _, pid := range kids {
		total += statusRSS(strconv.Itoa(pid))
	}
	return total, 1 + len(kids)
}

// treePSS sums the proportional set size of this process and its
// descendants in bytes: each page shared by n processes counts 1/n in
// each, so the sum is what the tree really holds.
func treePSS() int64 {
	self := os.Getpid()
	total := smapsPSS(strconv.Itoa(self))
	for _, pid := range descendants(self) {
		total += smapsPSS(strconv.Itoa(pid))
	}
	return total
}

// smapsPSS reads Pss of /proc/<pid>/smaps_rollup in bytes (0 if unknown).
func smapsPSS(pid string) int64 {
	data, err := os.ReadFile(filepath.Join("/proc", pid, "smaps_rollup"))
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(data) {
		if rest, ok := bytes.CutPrefix(line, []byte("Pss:")); ok {
			if f := bytes.Fields(rest); len(f) >= 1 {
				kb, _ := strconv.ParseInt(string(f[0]), 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// statusRSS reads VmRSS of /proc/<pid>/status in bytes (0 if unknown).
func statusRSS(pid string) int64 {
	data, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(data) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := bytes.Fields(rest)
			if len(f) >= 1 {
				kb, _ := strconv.ParseInt(string(f[0]), 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// descendants lists the pids of every descendant of root.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may contain spaces and parentheses.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(data[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}
