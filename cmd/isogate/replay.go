package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/replay"
	"github.com/isogate/isogate/v8sandbox"
)

func init() {
	register(&command{
		name: "replay",
		args: "FILE",
		summary: "Re-run a recorded call_tool_chain program (a run record from server.record_dir or isogate://runs/{id}) " +
			"against the recorded tool responses, with no backends: the result on stdout, console lines on stderr; " +
			"exit 0 when it ends as recorded, 1 when it differs or fails, 2 on usage errors.",
		flags: func(fs *pflag.FlagSet) {
			fs.Duration("timeout", 0, "run timeout (default: the recorded run's, else sandbox.timeout's default)")
			fs.String("log-level", "", "log `level`: debug, info, warn or error (default warn)")
			fs.String("log-format", "", "log `format`: text or json (default text)")
		},
		run: runReplay,
	})
}

// replayLogger logs as the other commands do (newLogger), at --log-level
// (default warn, as one-shot commands) in --log-format.
func replayLogger(env *cliEnv, fs *pflag.FlagSet) (*slog.Logger, error) {
	level, _ := fs.GetString("log-level")
	format, _ := fs.GetString("log-format")
	switch level {
	case "", "debug", "info", "warn", "error":
	default:
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	switch format {
	case "", "text", "json":
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", format)
	}
	if level == "" {
		level = "warn" // a one-shot command's default (quiet)
	}
	return newLogger(config.ServerConfig{LogLevel: level, LogFormat: format}, env.stderr), nil
}

func runReplay(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, args []string) int {
	if len(args) != 1 {
		return execFail(env, "INVALID_REQUEST", "usage: isogate replay FILE", 2)
	}
	rec, err := replay.ReadRecord(args[0])
	if err != nil {
		return execFail(env, "INVALID_REQUEST", err.Error(), 2)
	}
	logger, err := replayLogger(env, fs)
	if err != nil {
		return execFail(env, "INVALID_REQUEST", err.Error(), 2)
	}
	timeout, _ := fs.GetDuration("timeout")
	if timeout == 0 && (rec.Limits == nil || rec.Limits.TimeoutMS <= 0) {
		timeout = config.Default().Sandbox.Timeout // a record written before limits were
	}
	limits := replay.Limits(rec, timeout)
	// The recorded program is untrusted: it runs in a sandbox worker process.
	pool, err := app.NewRunner(app.Sandbox{Isolation: config.IsolationProcess, Concurrent: 1, Logger: logger,
		Limits: v8sandbox.Limits{Timeout: time.Duration(limits.TimeoutMS) * time.Millisecond, HeapMB: limits.HeapMB}})
	if err != nil {
		return execFail(env, "INTERNAL", err.Error(), 1)
	}
	defer pool.Close()
	out, err := replay.Run(ctx, rec, replay.Options{Runner: pool, Timeout: timeout, Logger: logger})
	if err != nil {
		return execFail(env, "INTERNAL", err.Error(), 1)
	}
	resp := out.Response
	if out.NotRun != "" {
		fmt.Fprintln(env.stderr, "replay: "+out.NotRun)
	}
	for _, line := range resp.Console {
		fmt.Fprintln(env.stderr, line)
	}
	if resp.IsError {
		fmt.Fprintln(env.stdout, resp.Text)
	} else {
		var b bytes.Buffer
		if json.Indent(&b, resp.Value, "", "  ") != nil {
			b.Reset()
			b.Write(resp.Value)
		}
		fmt.Fprintln(env.stdout, b.String())
	}
	if !out.Same {
		return execFail(env, "REPLAY_DIFFERS", out.Difference, 1)
	}
	return 0
}
