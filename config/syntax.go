package config

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// syntaxError gives a file's parse error the position a person needs: the
// line and column of a JSON syntax error (encoding/json reports only a
// byte offset), and for YAML the line that breaks the structure, which
// the parser often reports as the line where the enclosing mapping began
// (a bad indent on line 6 read as "line 3: did not find expected key").
func syntaxError(format string, src []byte, err error) error {
	switch format {
	case "JSON":
		var se *stdjson.SyntaxError
		if errors.As(err, &se) {
			line, col := position(src, se.Offset)
			return fmt.Errorf("line %d, column %d: %w", line, col, err)
		}
		var te *stdjson.UnmarshalTypeError
		if errors.As(err, &te) {
			line, col := position(src, te.Offset)
			return fmt.Errorf("line %d, column %d: %w", line, col, err)
		}
	case "YAML":
		// Only when the parser names an earlier line (where the enclosing
		// mapping began) than the one the document breaks at.
		if line, ok := yamlBadLine(src); ok && line > yamlReportedLine(err) {
			text := strings.TrimRight(string(lineAt(src, line)), "\r")
			col := len(text) - len(strings.TrimLeft(text, " \t")) + 1
			return fmt.Errorf("line %d, column %d: the document stops parsing here (check this line's indentation, brackets and quotes): %q; the parser said: %w",
				line, col, strings.TrimSpace(text), err)
		}
	}
	return err
}

// position turns a byte offset into a 1-based line and column (the column
// of the byte before offset, where encoding/json stopped).
func position(src []byte, offset int64) (line, col int) {
	offset = min(max(offset, 1), int64(len(src)))
	before := src[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - bytes.LastIndexByte(before, '\n') - 1
	return line, max(col, 1)
}

// yamlBadLine finds the line from which the document no longer parses:
// the prefix of the file ending just before it parses (or it is the first
// line), and no prefix ending with it or any later line does. A construct
// the next lines complete (an open flow sequence) does not count.
func yamlBadLine(src []byte) (int, bool) {
	lines := bytes.SplitAfter(src, []byte("\n"))
	if len(lines) > 5000 {
		return 0, false // a configuration file is far smaller; do not pay n² for a huge one
	}
	lastOK := 0 // lines in the longest prefix that parses
	var prefix []byte
	for i, l := range lines {
		prefix = append(prefix, l...)
		var v any
		if yamlv3.Unmarshal(prefix, &v) == nil {
			lastOK = i + 1
		}
	}
	if lastOK == len(lines) {
		return 0, false
	}
	return lastOK + 1, true
}

var yamlLine = regexp.MustCompile(`line (\d+):`)

// yamlReportedLine is the line a YAML parser error names, or 0.
func yamlReportedLine(err error) int {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// lineAt returns line n (1-based) of src.
func lineAt(src []byte, n int) []byte {
	lines := bytes.Split(src, []byte("\n"))
	if n < 1 || n > len(lines) {
		return nil
	}
	return lines[n-1]
}
