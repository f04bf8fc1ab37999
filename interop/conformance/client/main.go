// Command client is the conformance suite's client adapter for isogate:
// the suite runs it as `client --isogate PATH SERVER_URL` with the scenario
// in MCP_CONFORMANCE_SCENARIO (and, for some, client credentials in
// MCP_CONFORMANCE_CONTEXT). It writes an isogate configuration with the
// scenario's server as the streamable-HTTP backend "conformance" and the
// backend auth the scenario needs, then drives isogate as a user would:
// `isogate login conformance` for the authorization code scenarios (its
// authorization URL followed with an HTTP client, as a browser follows the
// authorization server's redirect back to isogate's loopback listener), and
// `isogate exec` calling the backend's tool, which connects to the backend
// (initialize, tools/list) with the token and calls test-tool. Everything
// OAuth is isogate's own backend client (internal/backendauth); the adapter
// only plays the user and the browser.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// backend is the backend's name in the configuration the adapter writes.
const backend = "conformance"

// clientMetadataURL is the client-ID metadata document URL the suite's
// authorization servers accept (the go-sdk's conformance client uses it).
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

func main() {
	isogate := flag.String("isogate", "isogate", "the isogate binary")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: client --isogate PATH SERVER_URL")
		os.Exit(2)
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	if !strings.HasPrefix(scenario, "auth/") {
		fmt.Fprintf(os.Stderr, "client: %q is not an auth scenario: the adapter drives isogate's backend auth only\n", scenario)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 28*time.Second)
	defer cancel()
	if err := run(ctx, *isogate, flag.Arg(0), scenario, os.Getenv("MCP_CONFORMANCE_CONTEXT")); err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
}

// scenarioContext is MCP_CONFORMANCE_CONTEXT: credentials the scenario
// registered for the client beforehand.
type scenarioContext struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	Issuer       string `json:"issuer"`
}

func run(ctx context.Context, isogate, serverURL, scenario, rawContext string) error {
	var sc scenarioContext
	if rawContext != "" {
		if err := json.Unmarshal([]byte(rawContext), &sc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	dir, err := os.MkdirTemp("", "isogate-conformance-client-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	conf := filepath.Join(dir, "isogate.yaml")
	grant := "authorization_code"
	if strings.HasPrefix(scenario, "auth/client-credentials") {
		grant = "client_credentials"
	}
	if err := os.WriteFile(conf, []byte(config(dir, serverURL, grant, sc)), 0o600); err != nil {
		return err
	}
	if grant == "authorization_code" {
		if err := login(ctx, isogate, conf); err != nil {
			return err
		}
	}
	return call(ctx, isogate, conf)
}

// config is the isogate configuration of the scenario.
func config(dir, serverURL, grant string, sc scenarioContext) string {
	var b strings.Builder
	fmt.Fprintf(&b, "server:\n  cache_dir: %q\n  log_format: text\n  log_level: debug\n", filepath.Join(dir, "cache"))
	fmt.Fprintf(&b, "backends:\n  %s:\n    url: %q\n    auth:\n      type: %s\n", backend, serverURL, grant)
	if sc.ClientID != "" {
		fmt.Fprintf(&b, "      client_id: %q\n", sc.ClientID)
	}
	if sc.ClientSecret != "" {
		fmt.Fprintf(&b, "      client_secret: %q\n", sc.ClientSecret)
	}
	if grant == "authorization_code" {
		fmt.Fprintf(&b, "      client_metadata_url: %q\n", clientMetadataURL)
	}
	return b.String()
}

// login runs `isogate login`, reads the authorization URL it prints and
// plays the browser: it requests the URL and follows the authorization
// server's redirect to isogate's loopback listener.
func login(ctx context.Context, isogate, conf string) error {
	cmd := exec.CommandContext(ctx, isogate, "login", backend, "--config", conf)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	browsed := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		found := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(os.Stderr, "login:", line)
			if u := strings.TrimSpace(line); !found && strings.HasPrefix(u, "http") {
				found = true
				browsed <- browse(ctx, u)
			}
		}
		if !found {
			browsed <- errors.New("isogate login printed no authorization URL")
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	browseErr := <-browsed
	waitErr := cmd.Wait()
	if waitErr != nil {
		return fmt.Errorf("isogate login: %w (browser: %v)", waitErr, browseErr)
	}
	return browseErr
}

// browse follows authURL as a browser would, redirects included, and
// reports a failure of the final page.
func browse(ctx context.Context, authURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("browsing the authorization URL: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	fmt.Fprintf(os.Stderr, "browser: %s %s: %s\n", resp.Request.URL.Redacted(), resp.Status, strings.TrimSpace(string(body)))
	return nil
}

// call runs a program through isogate that calls the backend's tool.
func call(ctx context.Context, isogate, conf string) error {
	cmd := exec.CommandContext(ctx, isogate, "exec", "--config", conf, "--wait", "20s",
		"-e", "return await "+backend+".test_tool({})")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("isogate exec: %w", err)
	}
	return nil
}
