package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/isogate/isogate/v8sandbox/procpool"
)

// The hidden sandbox-worker command is the other end of procpool: the
// gateway starts its own binary with it, one process per sandbox worker,
// and speaks a framed protocol on the child's stdin and stdout.
func init() {
	register(&command{
		name:    procpool.WorkerCommand,
		summary: "Internal: serve sandboxed JavaScript runs for a parent isogate process.",
		hidden:  true,
		run: func(ctx context.Context, _ *cliEnv, _ *pflag.FlagSet, _ []string) int {
			return procpool.WorkerMain(ctx)
		},
	})
}
