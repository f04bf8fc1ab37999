package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/codemode"
)

func init() {
	register(&command{
		name: "exec",
		args: "(-e CODE | FILE | -)",
		summary: "Run a call_tool_chain program from the terminal: the result on stdout, console lines on stderr, " +
			"a one-line JSON error and a non-zero exit on failure.",
		flags: func(fs *pflag.FlagSet) {
			config.RegisterFileFlags(fs)
			fs.StringP("eval", "e", "", "program text")
			fs.String("intent", "", "what you are looking for (filters large outputs)")
			fs.Duration("timeout", 0, "run timeout (default sandbox.timeout)")
			fs.Duration("wait", 10*time.Second, "how long to wait for backends to connect")
		},
		run: runExec,
	})
}

func runExec(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, args []string) int {
	code, err := programText(env, fs, args)
	if err != nil {
		return execFail(env, "INVALID_REQUEST", err.Error(), 2)
	}
	g, exit := oneShotGateway(ctx, env, fs)
	if g == nil {
		return exit
	}
	defer g.Close()
	intent, _ := fs.GetString("intent")
	timeout, _ := fs.GetDuration("timeout")
	// Detached: the output is printed whole, and nothing in it points at
	// the gateway, which exits with this command.
	resp := g.Engine.Execute(ctx, codemode.Request{Code: code, Intent: intent, Timeout: timeout, Detached: true})
	if resp.Record != nil {
		g.Surface.KeepRun("", resp.Record) // written to server.record_dir when set
	}
	printRunNotes(env.stderr, resp)
	if resp.IsError {
		return execFail(env, string(resp.Code), resp.Text, 1)
	}
	text := resp.Text
	if note := resp.Shaped.Note; note != "" {
		fmt.Fprintln(env.stderr, note)
		text = strings.TrimPrefix(text, note+"\n")
	}
	fmt.Fprintln(env.stdout, text)
	return 0
}

// printRunNotes writes what a run says besides its result to w (stderr):
// console lines, then [warning] and [notice] lines (tool calls the program
// did not await, "missing await?"), which leave the exit code alone.
func printRunNotes(w io.Writer, resp codemode.Response) {
	for _, line := range resp.Console {
		fmt.Fprintln(w, line)
	}
	for _, warning := range resp.Warnings {
		fmt.Fprintln(w, "[warning] "+warning)
	}
	for _, notice := range resp.Notices {
		fmt.Fprintln(w, "[notice] "+notice)
	}
}

// programText reads the program from -e, a file, or stdin ("-").
func programText(env *cliEnv, fs *pflag.FlagSet, args []string) (string, error) {
	if e, _ := fs.GetString("eval"); e != "" {
		if len(args) > 0 {
			return "", fmt.Errorf("give the program either with -e or as FILE, not both")
		}
		return e, nil
	}
	if len(args) != 1 {
		return "", fmt.Errorf("usage: isogate exec (-e CODE | FILE | -)")
	}
	var b []byte
	var err error
	if args[0] == "-" {
		b, err = io.ReadAll(env.stdin)
	} else {
		b, err = os.ReadFile(args[0])
	}
	if err != nil {
		return "", fmt.Errorf("reading program: %w", err)
	}
	return string(b), nil
}

func execFail(env *cliEnv, code, message string, exit int) int {
	b, _ := json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{code, message})
	fmt.Fprintln(env.stderr, string(b))
	return exit
}
