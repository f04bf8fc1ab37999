package codemode

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"
	"github.com/go-sourcemap/sourcemap"
)

// mainName is the global the wrapped program is assigned to.
const mainName = "__isogate_main"

// finishName is the bridge's completion hook the script's value goes
// through: it waits for the tool calls the program did not await
// (bridge.js).
const finishName = "__isogate_finish"

// startName is the bridge's hook that a script's first statement calls
// with what the run's start is (bridge.js), so that a run without a
// journal, or one that replays nothing, asks nothing of the host for it.
const startName = "__isogate_start"

// withStart is js preceded, on its first line (the engine's, never the
// program's: every script's first line is a wrapper's), by the statement
// telling the bridge the start of run d (nil: no journal). Its text is one
// of three constants: the worker's script cache still finds a program run
// again.
func withStart(js string, d *DurableRun) string {
	how := "true" // a replay: asked of the host on first use
	switch {
	case d == nil:
		how = "false"
	case d.fresh():
		how = `"fresh"`
	}
	return startName + "(" + how + "); " + js
}

// origin names the user's program in stack traces.
const origin = "program.js"

// program is user code turned into a script for the engine.
type program struct {
	js string
	// lineShift is how many lines the wrapper added before the user's code
	// (negative: before the transformed code, for the module wrapper).
	lineShift int
	// sourceMap is esbuild's map, parsed on first use (only an error needs it).
	sourceMap []byte
	mapping   *sourcemap.Consumer
	mapOnce   sync.Once

	// body is the user's code (fences stripped), rewritten to return its
	// last expression when rewritten is set; original is without that (the
	// code positions are reported in, whichever way it was compiled).
	body, original string
	rewritten      bool
	// plain is set when js is body wrapped as is, without esbuild: a
	// syntax error from V8 then means the code needs esbuild (typescript).
	plain bool
	// prefixLine and prefixColumn (1-based, 0 for none) are where body
	// has resultPrefix before the user's last expression.
	prefixLine, prefixColumn int
}

// reExportsMain matches code that exports its entry point itself.
var reExportsMain = regexp.MustCompile(`(?m)^\s*export\s+(default\b|(async\s+)?function\s*\*?\s*main\b|(const|let|var)\s+main\b)`)

// exportsMain reports whether code exports its entry point itself: most
// programs never say "export", and are known not to without running the
// expression.
func exportsMain(code string) bool {
	return strings.Contains(code, "export") && reExportsMain.MatchString(code)
}

// ExportsMain reports whether code (a call_tool_chain program or a saved
// program's code) is a module: it exports its entry point itself
// (export default, or a main).
func ExportsMain(code string) bool { return exportsMain(stripFences(code)) }

// compile prepares code for a first V8 attempt. Plain JavaScript is only
// wrapped (top-level await and return work inside an async function), with
// no esbuild pass; V8 reports whether it parses, and [program.typescript]
// then strips types. Code that exports a default or a main function is a
// module: it goes through esbuild at once.
func compile(code string) (*program, error) {
	code = stripFences(code)
	if exportsMain(code) {
		p, err := transform(code, api.FormatCommonJS)
		if err == nil {
			p.original = code
		}
		return p, err
	}
	body, rewritten, at := withResultAt(code)
	p := &program{
		js:   finishName + "((async function main() {\n" + body + "\n})())",
		body: body, original: code, rewritten: rewritten, plain: true, lineShift: 1,
	}
	if at >= 0 {
		p.prefixLine = strings.Count(code[:at], "\n") + 1
		p.prefixColumn = at - strings.LastIndex(code[:at], "\n")
	}
	return p, nil
}

// typescript is the esbuild version of a plain program that V8 could not
// parse. When the rewrite for the last expression is at fault, the
// original code is used; a syntax error names the user's line.
func (p *program) typescript() (*program, error) {
	q, err := transform(p.body, api.FormatDefault)
	if err == nil {
		q.prefixLine, q.prefixColumn, q.original = p.prefixLine, p.prefixColumn, p.original
	}
	if err != nil && p.rewritten {
		if q2, err2 := transform(p.original, api.FormatDefault); err2 == nil {
			q2.original = p.original
			return q2, nil
		}
		_, err = transform(p.original, api.FormatDefault)
	}
	return q, err
}

// transform strips TypeScript types with esbuild and wraps code so that
// top-level return and await work; a module's export is called (or
// returned when it is not a function).
func transform(code string, format api.Format) (*program, error) {
	var input string
	shift := 0
	if format == api.FormatCommonJS {
		input = code
	} else {
		// Wrap first, then transform: esbuild rejects a top-level return.
		input = "globalThis." + mainName + " = async function main() {\n" + code + "\n};"
		shift = 1
	}
	res := api.Transform(input, api.TransformOptions{
		Loader:     api.LoaderTS,
		Target:     api.ES2022,
		Format:     format,
		Sourcemap:  api.SourceMapExternal,
		Sourcefile: origin,
		Charset:    api.CharsetUTF8,
	})
	if len(res.Errors) > 0 {
		return nil, compileError(res.Errors, shift, code)
	}
	p := &program{lineShift: shift, sourceMap: res.Map}
	js := string(res.Code)
	if format == api.FormatCommonJS {
		p.js = finishName + "((() => {\nconst module = { exports: {} }; const exports = module.exports;\n" + js +
			"\nconst m = module.exports; const entry = m.default !== undefined ? m.default : m.main;\n" +
			"return typeof entry === \"function\" ? entry() : entry;\n})())"
		p.lineShift = -2 // two lines precede the transformed code
	} else {
		p.js = js + "\n;" + finishName + "(globalThis." + mainName + "())"
	}
	return p, nil
}

// CompileError is a syntax error in the user's program.
type CompileError struct {
	Message      string
	Line, Column int
	LineText     string
}

func (e *CompileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("SyntaxError: %s (line %d, column %d)", e.Message, e.Line, e.Column)
	}
	return "SyntaxError: " + e.Message
}

// compileError reports esbuild's first error at its place in code, the
// program as written: an error esbuild finds in the wrapper's lines after
// the program (an unclosed brace or string reaches them) is at the end of
// the program, one before it at its start.
func compileError(msgs []api.Message, shift int, code string) error {
	m := msgs[0]
	e := &CompileError{Message: m.Text}
	if m.Location == nil {
		return e
	}
	lines := strings.Split(strings.TrimRight(code, " \t\r\n"), "\n")
	e.Line = m.Location.Line - shift
	e.Column = m.Location.Column + 1
	e.LineText = m.Location.LineText
	switch {
	case e.Line > len(lines):
		e.Line = len(lines)
		e.LineText = lines[len(lines)-1]
		e.Column = len(e.LineText) + 1
	case e.Line < 1:
		e.Line, e.Column, e.LineText = 1, 1, lines[0]
	}
	return e
}

// position maps a line/column of the engine's script (1-based) to the
// user's code, or returns ok=false when it has no counterpart there.
func (p *program) position(line, column int) (int, int, bool) {
	if p == nil || line <= 0 {
		return 0, 0, false
	}
	if p.plain { // no transformation: only the wrapper's first and last lines
		if l := line - p.lineShift; l <= 0 || l > strings.Count(p.original, "\n")+1 {
			return 0, 0, false
		}
		return p.withoutPrefix(line-p.lineShift, column)
	}
	if p.lineShift < 0 { // module wrapper: the transformed code starts later
		line += p.lineShift
	}
	p.mapOnce.Do(func() {
		if m, err := sourcemap.Parse(origin+".map", p.sourceMap); err == nil {
			p.mapping = m
		}
	})
	if p.mapping == nil {
		return 0, 0, false
	}
	_, _, l, c, ok := p.mapping.Source(line, max(column-1, 0))
	if !ok {
		return 0, 0, false
	}
	if p.lineShift > 0 {
		l -= p.lineShift
	}
	if l <= 0 {
		return 0, 0, false
	}
	return p.withoutPrefix(l, c+1)
}

// withoutPrefix maps a position in body to the user's code: on the line
// where resultPrefix was inserted, a column after it moves back by its
// length, and a column inside it is the last expression's start.
func (p *program) withoutPrefix(line, column int) (int, int, bool) {
	if line == p.prefixLine && column > p.prefixColumn {
		column = max(column-len(resultPrefix), p.prefixColumn)
	}
	return line, column, true
}

var stackPosition = regexp.MustCompile(regexp.QuoteMeta(origin) + `:(\d+):(\d+)`)

// internalFrame matches a stack frame of the gateway's own scripts (the
// engine's bootstrap, the bridge prelude), which say nothing about the
// program: a failed tool call's error is built there.
var internalFrame = regexp.MustCompile(`^\s+at (?:.* \()?(?:<embedded>|isogate:prelude\.js):\d+:\d+\)?$`)

// mapStack rewrites "program.js:L:C" positions in a stack trace to the
// user's lines, or to a saved program's own (name@3:L:C) when lib, the
// run's library, holds them; frames of the wrapper itself and of the
// gateway's own scripts are dropped.
func (p *program) mapStack(stack string, lib *Library) string {
	var out []string
	for _, line := range strings.Split(stack, "\n") {
		m := stackPosition.FindStringSubmatchIndex(line)
		if m == nil {
			if !internalFrame.MatchString(line) {
				out = append(out, line)
			}
			continue
		}
		l, _ := strconv.Atoi(line[m[2]:m[3]])
		c, _ := strconv.Atoi(line[m[4]:m[5]])
		if ul, uc, ok := p.position(l, c); ok {
			out = append(out, line[:m[0]]+fmt.Sprintf("%s:%d:%d", origin, ul, uc)+line[m[1]:])
		} else if ref, ul, uc, ok := lib.locate(p.js, l, c); ok { // in a saved program's code
			out = append(out, line[:m[0]]+fmt.Sprintf("%s:%d:%d", ref, ul, uc)+line[m[1]:])
		}
	}
	return strings.Join(out, "\n")
}
