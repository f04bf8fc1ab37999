package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// cpuProfileEnv names the file `isogate serve` writes a Go CPU profile to,
// from its start until it exits (docs/operations.md, "Profiling").
const cpuProfileEnv = "ISOGATE_CPUPROFILE"

// startCPUProfile starts the CPU profile that cpuProfileEnv asks for when
// the command is serve (worker processes inherit the environment and are
// not profiled), and returns the function that stops and writes it.
// Failures are reported on stderr and leave the command unprofiled.
func startCPUProfile(args []string, stderr io.Writer) (stop func()) {
	path := os.Getenv(cpuProfileEnv)
	if path == "" || len(args) == 0 || args[0] != "serve" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "isogate: %s: %v\n", cpuProfileEnv, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(stderr, "isogate: %s: %v\n", cpuProfileEnv, err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "isogate: %s: %v\n", cpuProfileEnv, err)
		}
	}
}
