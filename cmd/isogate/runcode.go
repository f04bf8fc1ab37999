package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/runcode"
)

func init() {
	register(&command{
		name:    "run-code",
		args:    "[-e CODE | FILE | -]",
		summary: "Run JavaScript the way the run_code tool does and print its JSON output.",
		flags: func(fs *pflag.FlagSet) {
			fs.StringP("eval", "e", "", "run `code` given on the command line")
			fs.Int("timeout-ms", 0, "timeout in `ms` (default 3000, clamped to 250-5000)")
			fs.String("hints", "", `hints for the APIs, as a JSON object such as '{"location": {"latitude": 52.5, "longitude": 13.4}}'`)
			fs.String("config", "", "configuration `file` whose run_code section selects the APIs (default $XDG_CONFIG_HOME/isogate/isogate.yaml)")
		},
		run: runCodeCommand,
	})
}

// runCodeCommand prints run_code's output as JSON on stdout and exits 0 when
// the code ran, 1 when it failed and 2 on a usage or configuration error.
func runCodeCommand(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(env.stderr, "isogate run-code: "+format+"\n", a...)
		return 2
	}
	code, err := runCodeSource(env, fs, args)
	if err != nil {
		return fail("%v", err)
	}
	in := runcode.Input{Code: code}
	if fs.Changed("timeout-ms") {
		ms, _ := fs.GetInt("timeout-ms")
		in.TimeoutMS = &ms
	}
	if hints, _ := fs.GetString("hints"); hints != "" {
		if err := json.Unmarshal([]byte(hints), &in.Hints); err != nil {
			return fail("--hints must be a JSON object: %v", err)
		}
	}
	path, _ := fs.GetString("config")
	cfg, err := config.Load(config.LoadOptions{Path: path})
	if err != nil {
		return fail("%v", err)
	}

	pool, err := app.NewRunner(app.Sandbox{Isolation: cfg.Sandbox.Isolation, Concurrent: 2, Logger: discardLogger()})
	if err != nil {
		return fail("starting the sandbox worker: %v", err)
	}
	defer pool.Close()
	runner, err := runcode.New(runcode.Options{Runner: pool, Config: cfg.RunCode, Logger: discardLogger()})
	if err != nil {
		return fail("%v", err)
	}
	out := runner.Run(ctx, in)
	if err := writeJSON(env.stdout, out, false); err != nil {
		return fail("%v", err)
	}
	if !out.OK {
		return 1
	}
	return 0
}

// runCodeSource reads the code from -e, a file, or stdin ("-" or nothing).
func runCodeSource(env *cliEnv, fs *pflag.FlagSet, args []string) (string, error) {
	if fs.Changed("eval") {
		if len(args) > 0 {
			return "", fmt.Errorf("give the code with -e or as a file, not both")
		}
		return fs.GetString("eval")
	}
	if len(args) > 1 {
		return "", fmt.Errorf("expected one FILE, got %d arguments", len(args))
	}
	if len(args) == 0 || args[0] == "-" {
		b, err := io.ReadAll(env.stdin)
		return string(b), err
	}
	b, err := os.ReadFile(args[0])
	return string(b), err
}
