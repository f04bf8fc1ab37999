package codemode

import "github.com/evanw/esbuild/pkg/api"

// CheckSyntax reports whether code, a call_tool_chain program, parses as
// a run compiles it (TypeScript, which plain JavaScript is; a module when
// it exports its entry point): nil, or a *CompileError naming the first
// syntax error at its line and column in code. It runs nothing.
func CheckSyntax(code string) error {
	code = stripFences(code)
	format := api.FormatDefault
	if exportsMain(code) {
		format = api.FormatCommonJS
	}
	_, err := transform(code, format)
	return err
}
