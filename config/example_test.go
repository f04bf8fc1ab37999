package config_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/isogate/isogate/config"
)

func ExampleLoad() {
	dir, err := os.MkdirTemp("", "isogate-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "isogate.yaml")
	yaml := `
server:
  log_level: debug
backends:
  github:
    command: github-mcp-server
    args: [stdio]
    env:
      GITHUB_TOKEN: ${GITHUB_TOKEN}
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		log.Fatal(err)
	}

	cfg, err := config.Load(config.LoadOptions{
		Path: path,
		// ${VAR} values and ISOGATE_* overrides come from this environment
		// (the process's when nil).
		Environ: []string{"GITHUB_TOKEN=ghp_example", "ISOGATE_SANDBOX__TIMEOUT=10s"},
	})
	if err != nil {
		log.Fatal(err)
	}
	gh := cfg.Backends["github"]
	fmt.Println(cfg.BackendNames(), gh.Transport, gh.Command, gh.Args, gh.Env["GITHUB_TOKEN"])
	fmt.Println(cfg.Server.LogLevel, cfg.Sandbox.Timeout, cfg.Sandbox.MaxHeapMB, gh.Timeout)
	// Output:
	// [github] stdio github-mcp-server [stdio] ghp_example
	// debug 10s 50 30s
}

func ExampleDefault() {
	cfg := config.Default()
	fmt.Println(len(cfg.Backends), cfg.Server.HTTP == "", cfg.Sandbox.Isolation, cfg.Sandbox.Timeout, cfg.Sandbox.MaxConcurrent)
	// Output: 0 true process 30s 8
}
