package main

import (
	"context"

	"github.com/spf13/pflag"
	v8 "rogchap.com/v8go"

	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/jsrun"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

func init() {
	register(&command{
		name:    "jsrun",
		summary: "Run one deny-by-default script: a JSON request on stdin, a JSON answer on stdout/stderr.",
		flags: func(fs *pflag.FlagSet) {
			fs.String("isolation", "process", "process: run the script in a sandbox worker process, so even a V8 abort "+
				"is reported as JSON; thread: run it in this process (faster start)")
		},
		run: func(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, _ []string) int {
			var runner v8sandbox.Runner
			if isolation, _ := fs.GetString("isolation"); isolation == "thread" {
				runner = v8sandbox.NewPool(v8sandbox.Options{Workers: 1, Logger: discardLogger()})
			} else {
				pool, err := procpool.New(procpool.Options{Workers: 1, SlotsPerWorker: 1, Logger: discardLogger()})
				if err != nil {
					return jsrun.Fail(env.stderr, v8sandbox.Errorf(v8sandbox.CodeInternal, "starting the sandbox worker: %v", err))
				}
				runner = pool
			}
			defer runner.Close()
			return jsrun.Main(ctx, runner, env.stdin, env.stdout, env.stderr)
		},
	})
}

func v8Version() string { return v8.Version() }
