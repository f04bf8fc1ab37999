package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backendauth"
)

func init() {
	register(&command{
		name: "login",
		args: "BACKEND",
		summary: "Authorize isogate at an authorization_code backend (backends.<name>.auth): print the authorization URL, " +
			"receive the redirect on loopback, store the tokens (0600) where the gateway refreshes them.",
		flags: config.RegisterFileFlags,
		run:   runLogin,
	})
}

func runLogin(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(env.stderr, "usage: isogate login BACKEND")
		return 2
	}
	cfg, ok := loadConfig(env, fs)
	if !ok {
		return 2
	}
	b, ok := cfg.Backends[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "isogate: no backend %q in the configuration\n", args[0])
		return 2
	}
	if b.Auth.Type != config.BackendAuthAuthorizationCode {
		fmt.Fprintf(env.stderr, "isogate: backend %q: auth.type is %q; login is for authorization_code\n", b.Name, b.Auth.Type)
		return 2
	}
	opts := backendauth.Options{Backend: b.Name, URL: b.URL, Auth: b.Auth, CacheDir: cfg.Server.CacheDir}
	logins, err := app.LoginTokens(cfg)
	if err != nil {
		fmt.Fprintf(env.stderr, "isogate: %v\n", err)
		return 2
	}
	if logins != nil {
		defer logins.Close()
		opts.Tokens = logins
	}
	a, err := backendauth.New(opts)
	if err != nil {
		fmt.Fprintf(env.stderr, "isogate: %v\n", err)
		return 2
	}
	if err := a.Login(ctx, env.stdout); err != nil {
		fmt.Fprintf(env.stderr, "isogate: login to %s: %v\n", b.Name, err)
		return 1
	}
	return 0
}
