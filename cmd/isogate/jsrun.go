package main

import (
	"context"

	"github.com/spf13/pflag"
	v8 "rogchap.com/v8go"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/jsrun"
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
			isolation := config.IsolationProcess
			if s, _ := fs.GetString("isolation"); s == "thread" {
				isolation = config.IsolationThread
			}
			runner, err := app.NewRunner(app.Sandbox{Isolation: isolation, Concurrent: 1, Logger: discardLogger()})
			if err != nil {
				return jsrun.Fail(env.stderr, v8sandbox.Errorf(v8sandbox.CodeInternal, "starting the sandbox worker: %v", err))
			}
			defer runner.Close()
			return jsrun.Main(ctx, runner, env.stdin, env.stdout, env.stderr)
		},
	})
}

func v8Version() string { return v8.Version() }
