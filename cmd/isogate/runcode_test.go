package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestRunCodeBinary(t *testing.T) {
	cfg := writeConfig(t, "")
	stdout, stderr, code := runBinary(t, "", "run-code", "--config", cfg, "-e", `console.log("hi"); console.warn("careful"); return [1, 2n, new Set([3])]`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Stdout []string        `json:"stdout"`
		Stderr []string        `json:"stderr"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	var compact bytes.Buffer
	json.Compact(&compact, out.Result)
	if !out.OK || compact.String() != `[1,"2",[3]]` || len(out.Stdout) != 1 || out.Stdout[0] != "hi" || len(out.Stderr) != 1 {
		t.Fatalf("unexpected output: %s", stdout)
	}
	stdout, _, code = runBinary(t, "", "run-code", "--config", cfg, "--timeout-ms", "100", "-e", `for(;;){}`)
	if code != 1 || !json.Valid([]byte(stdout)) {
		t.Fatalf("exit %d: %s", code, stdout)
	}
	var failed struct {
		Error    struct{ Type string } `json:"error"`
		Warnings []string              `json:"warnings"`
	}
	json.Unmarshal([]byte(stdout), &failed)
	if failed.Error.Type != "TimeoutError" || len(failed.Warnings) != 1 {
		t.Fatalf("timeout: %s", stdout)
	}
}
