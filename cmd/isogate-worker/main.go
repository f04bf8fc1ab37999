// Command isogate-worker is isogate's sandbox worker process alone: the
// binary an isogate gateway starts, one process per sandbox worker, when it
// finds it next to its own executable (built by `make build`); otherwise
// the gateway starts itself (`isogate sandbox-worker`). It is the same
// worker, confinement and protocol (package procpool) in a binary with a
// far smaller package graph, so that a worker starts sooner: fewer package
// initialisations and fewer pages touched at start.
//
// It is never run by hand: started any other way than by a gateway, it
// says so and exits with status 2.
package main

import (
	"fmt"
	"os"

	// The gateway's startup script for the sandbox (its value kit): a
	// worker's isolates must start from the same scripts as the gateway
	// expects (procpool checks their key at the handshake).
	_ "github.com/isogate/isogate/internal/jsvalue"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

func main() {
	procpool.RunWorkerIfRequested() // does not return when started as a worker
	fmt.Fprintf(os.Stderr, "isogate-worker is internal: an isogate gateway starts it as `isogate-worker %s` and speaks a binary protocol on its stdin and stdout\n", procpool.WorkerCommand)
	os.Exit(2)
}
