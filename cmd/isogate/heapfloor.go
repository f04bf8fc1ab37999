package main

import (
	"os"
	"runtime"
)

// heapFloor is the heap size below which `isogate serve` does not collect
// garbage often. The go-sdk allocates a fresh 32 kB decoder buffer for each
// JSON value it decodes, several per MCP message: some 450 kB per tool call
// for the two ends of one connection. With the runtime's 4 MB minimum heap
// goal, a gateway whose live heap is small ran a garbage collection every few
// tool calls, the largest part of a passthrough call's overhead.
const heapFloor = 32 << 20

// ballast holds heapFloor bytes that are allocated and never written: the
// collector counts them as live heap (so its goal is at least twice
// heapFloor) but never scans them (no pointers) and, never touched, they
// take address space, not resident memory.
var ballast []byte

// raiseHeapFloor sets the ballast, unless the operator tuned the collector
// (GOGC or GOMEMLIMIT in the environment), whose setting then stands alone.
func raiseHeapFloor() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	ballast = make([]byte, heapFloor)
	runtime.KeepAlive(ballast)
}
