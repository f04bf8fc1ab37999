package runcode

import (
	_ "embed"
	"regexp"
	"strconv"
	"strings"

	"github.com/isogate/isogate/internal/jsvalue"
)

var (
	//go:embed prelude.js
	preludeJS string
	//go:embed console.js
	consoleJS string
)

// consoleFunction is the sync host function behind console.*: it takes the
// stream ("stdout" or "stderr") and the line, and returns how many more
// lines will be kept. prelude.js removes it from the global object.
const consoleFunction = "__runcode.console"

// codeFunction hands the user's code to the prelude as data (a string), so
// it can check that the code is a function body by itself; resultFunction
// takes the envelope {ok, result | error} from the prelude's runner. Both
// are sync and removed from the global object by prelude.js.
const (
	codeFunction   = "__runcode.code"
	resultFunction = "__runcode.result"
)

// stateInvalidFunction is the sync host function prelude.js calls when a
// state.* call's arguments cannot be serialized: it takes the operation
// and why, and throws STATE_INVALID. Removed from the global object by
// prelude.js; registered only with run_code.state.
const stateInvalidFunction = "__runcode.stateInvalid"

// prelude is the trusted script run before the user's code: prelude.js and
// console.js in the scope of internal/jsvalue's kit, whose captured
// built-ins and helpers they use, with the kit's result sanitizer (the same
// conversion call_tool_chain uses) given run_code's stack and error text.
var prelude = jsvalue.Scope("const CODE_COLUMN_OFFSET = " + strconv.Itoa(len(sourcePrefix)) +
	";\nconst MAX_ERROR_CHARS = " + strconv.Itoa(MaxLineChars) + ";\n" + preludeJS +
	// The sanitizer counts the outermost object as depth 0: objects at
	// depths 0..MaxDepth-1 (MaxDepth levels) are shown, deeper ones not.
	"\nconst sanitize = makeSanitizer({stripStack, errorText, maxDepth: " + strconv.Itoa(MaxDepth-1) + "});\n" + consoleJS)

// MaxDepth is how many levels of nested objects and arrays a result (and a
// console value) shows; deeper ones become "[MaxDepth]" (the seed
// contract's MAX_SERIALIZATION_DEPTH, promised in the tool's description).
const MaxDepth = 10

// codeOrigin names the user's code in stack traces.
const codeOrigin = "code.js"

// sourcePrefix opens the function around the user's code, on its first line.
const sourcePrefix = "__isogate_run(async function () {"

// wrapSource makes the user's code the body of an async function handed to
// the prelude's runner. The opening stays on the code's first line so line
// numbers in stack traces match the code as written; columns on the first
// line are corrected by the prelude (fixStack) and by [fixStack].
func wrapSource(code string) string {
	var b strings.Builder
	b.Grow(len(code) + 64)
	b.WriteString(sourcePrefix)
	b.WriteString(code)
	b.WriteString("\n})")
	return b.String()
}

var firstLineColumn = regexp.MustCompile(`(\(?)code\.js:1:(\d+)`)

// fixStack removes the frames of isogate's scripts (the prelude and the
// wrapper around the code) from a stack trace and corrects the columns of
// the code's first line, shifted by the wrapper. prelude.js does the same in
// JavaScript.
func fixStack(stack string) string {
	var kept []string
	for line := range strings.SplitSeq(stack, "\n") {
		if strings.Contains(line, "isogate:") {
			continue
		}
		// The wrapper's own frame is the anonymous one left of the code on
		// line 1; named frames there are imprecise positions (stack overflow).
		wrapper := false
		line = firstLineColumn.ReplaceAllStringFunc(line, func(m string) string {
			g := firstLineColumn.FindStringSubmatch(m)
			col, _ := strconv.Atoi(g[2])
			col -= len(sourcePrefix)
			if col <= 0 {
				wrapper = wrapper || g[1] == ""
				col = 1
			}
			return g[1] + "code.js:1:" + strconv.Itoa(col)
		})
		if !wrapper {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}
