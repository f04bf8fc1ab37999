// Package checkworker runs the type checker (internal/typecheck) in a
// confined worker process of procpool's, for process isolation: the
// program text the TypeScript compiler parses is the attacker's, so the
// compiler lives behind the same walls as the programs. [Checker] is the
// parent's side (checker.go); the worker's side (server.go) registers
// itself with procpool, so that the binary that links this package is its
// worker.
package checkworker
