package main

import (
	"context"

	"github.com/spf13/pflag"
	v8 "rogchap.com/v8go"

	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/jsrun"
)

func init() {
	register(&command{
		name:    "jsrun",
		summary: "Run one deny-by-default script: a JSON request on stdin, a JSON answer on stdout/stderr.",
		run: func(ctx context.Context, env *cliEnv, _ *pflag.FlagSet, _ []string) int {
			pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1, Logger: discardLogger()})
			defer pool.Close()
			return jsrun.Main(ctx, pool, env.stdin, env.stdout, env.stderr)
		},
	})
}

func v8Version() string { return v8.Version() }
