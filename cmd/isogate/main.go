// Command isogate is an MCP gateway with a V8 code mode.
//
// Run `isogate help` for the list of commands and `isogate COMMAND --help`
// for the flags of each.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// command is one subcommand of the CLI.
type command struct {
	name    string
	args    string // usage of positional arguments
	summary string
	hidden  bool
	flags   func(fs *pflag.FlagSet)
	run     func(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, args []string) int
}

// cliEnv carries the process streams so commands stay testable.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := startProfiles(os.Args[1:], os.Stderr)
	code := runCLI(ctx, &cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:])
	stopProfile()
	stop()
	os.Exit(code)
}

func runCLI(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "--help" || args[0] == "-h" {
		usage(env.stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-v" {
		args[0] = "version"
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "isogate: unknown command %q\n\n", args[0])
		usage(env.stderr)
		return 2
	}
	fs := pflag.NewFlagSet("isogate "+c.name, pflag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "Usage: isogate %s [flags] %s\n\n%s\n\nFlags:\n%s", c.name, c.args, c.summary, fs.FlagUsages())
	}
	if c.flags != nil {
		c.flags(fs)
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	return c.run(ctx, env, fs, fs.Args())
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "isogate: an MCP gateway with a V8 code mode.\n\nUsage: isogate COMMAND [flags]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for name, c := range commands {
		if !c.hidden {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-10s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(w, "\nRun 'isogate COMMAND --help' for the flags of a command.")
}

func init() {
	register(&command{
		name:    "version",
		summary: "Print the isogate version.",
		run: func(_ context.Context, env *cliEnv, _ *pflag.FlagSet, _ []string) int {
			fmt.Fprintf(env.stdout, "isogate %s (V8 %s)\n", version, strings.TrimSpace(v8Version()))
			return 0
		},
	})
}
