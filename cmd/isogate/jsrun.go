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
				"is reported as JSON; thread: run it in this process (faster start; needs --trusted-code)")
			fs.Bool("trusted-code", false, "declare the script trusted, as sandbox.trusted_code does: required by --isolation thread, "+
				"where off-heap memory (Intl/ICU) is not bounded and a V8 abort ends the process")
		},
		run: func(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, _ []string) int {
			s, _ := fs.GetString("isolation")
			trusted, _ := fs.GetBool("trusted-code")
			isolation := config.Isolation(s)
			switch {
			case isolation != config.IsolationProcess && isolation != config.IsolationThread:
				return jsrun.Fail(env.stderr, v8sandbox.Errorf(jsrun.CodeInvalidRequest, "--isolation must be process or thread, not %q", s))
			case isolation == config.IsolationThread && !trusted:
				return jsrun.Fail(env.stderr, v8sandbox.Errorf(jsrun.CodeInvalidRequest,
					"--isolation thread runs the script inside this process, where off-heap memory (Intl/ICU) is not bounded "+
						"and a V8 abort ends the process: it requires --trusted-code (or use --isolation process, the default, for untrusted input)"))
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
