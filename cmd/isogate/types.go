package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/isogate/isogate/config"
)

func init() {
	register(&command{
		name:    "types",
		summary: "Print TypeScript declarations (.d.ts) of the tool catalogue: one `declare const` per backend.",
		flags: func(fs *pflag.FlagSet) {
			config.RegisterFileFlags(fs)
			fs.String("backend", "", "only this backend")
			fs.Duration("wait", 10*time.Second, "how long to wait for backends to connect (the cache answers at once)")
		},
		run: func(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, _ []string) int {
			g, code := oneShotGateway(ctx, env, fs)
			if g == nil {
				return code
			}
			defer g.Close()
			backend, _ := fs.GetString("backend")
			dts, ok := g.Catalog.TypeScript(backend)
			if !ok {
				fmt.Fprintf(env.stderr, "isogate: no tools from backend %q (backends: %v)\n", backend, g.Catalog.Backends())
				return 1
			}
			fmt.Fprint(env.stdout, dts)
			return 0
		},
	})
}
