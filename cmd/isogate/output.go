package main

import (
	"encoding/json"
	"io"

	"github.com/spf13/pflag"
)

// writeJSON writes v to w as JSON indented by two spaces. escapeHTML
// escapes <, > and & (\u003c…, encoding/json's default), as the reports
// of check and doctor have always been printed; run-code prints the
// run_code tool's output as the tool gives it, unescaped.
func writeJSON(w io.Writer, v any, escapeHTML bool) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(escapeHTML)
	return enc.Encode(v)
}

// printReport prints a command's report r (check, check --saved, doctor)
// to env.stdout: as JSON (writeJSON, escaped) when its --json flag is
// set, else with text, for a terminal.
func printReport[T any](env *cliEnv, fs *pflag.FlagSet, r T, text func(io.Writer, T)) {
	if asJSON, _ := fs.GetBool("json"); asJSON {
		_ = writeJSON(env.stdout, r, true)
		return
	}
	text(env.stdout, r)
}
