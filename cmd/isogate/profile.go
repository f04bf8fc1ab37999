package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// cpuProfileEnv names the file `isogate serve` writes a Go CPU profile to,
// from its start until it exits (docs/operations.md, "Profiling").
const cpuProfileEnv = "ISOGATE_CPUPROFILE"

// traceEnv names the file `isogate serve` writes a Go execution trace to
// (goroutines, their hand-offs and the threads they ran on; read with `go
// tool trace`), from its start until it exits.
const traceEnv = "ISOGATE_TRACE"

// profilers are what serve can record for its whole life: each is started
// when its environment variable names a file.
var profilers = []struct {
	env   string
	start func(io.Writer) error
	stop  func()
}{
	{cpuProfileEnv, pprof.StartCPUProfile, pprof.StopCPUProfile},
	{traceEnv, trace.Start, trace.Stop},
}

// startProfiles starts the CPU profile and the execution trace that
// cpuProfileEnv and traceEnv ask for when the command is serve (worker
// processes inherit the environment and are not profiled), and returns the
// function that stops and writes them. Failures are reported on stderr
// and leave the command without that profile.
func startProfiles(args []string, stderr io.Writer) (stop func()) {
	var stops []func()
	for _, p := range profilers {
		path := os.Getenv(p.env)
		if path == "" || len(args) == 0 || args[0] != "serve" {
			continue
		}
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintf(stderr, "isogate: %s: %v\n", p.env, err)
			continue
		}
		if err := p.start(f); err != nil {
			fmt.Fprintf(stderr, "isogate: %s: %v\n", p.env, err)
			f.Close()
			continue
		}
		stops = append(stops, func() {
			p.stop()
			if err := f.Close(); err != nil {
				fmt.Fprintf(stderr, "isogate: %s: %v\n", p.env, err)
			}
		})
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}
