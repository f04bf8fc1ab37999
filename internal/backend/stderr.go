package backend

import (
	"bytes"
	"log/slog"
	"regexp"
	"strings"
	"sync"
)

// DefaultStderrLines is the number of stderr lines kept per stdio backend.
const DefaultStderrLines = 100

// maxStderrLine bounds a single buffered stderr line; longer lines are split.
const maxStderrLine = 4096

// ringBuffer keeps the last cap lines written to it. It is safe for
// concurrent use.
type ringBuffer struct {
	mu    sync.Mutex
	lines []string
	next  int // index of the slot the next line goes to
	full  bool
}

func newRingBuffer(n int) *ringBuffer {
	if n <= 0 {
		n = DefaultStderrLines
	}
	return &ringBuffer{lines: make([]string, n)}
}

// add appends a line, evicting the oldest one when the buffer is full.
func (r *ringBuffer) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines[r.next] = line
	r.next++
	if r.next == len(r.lines) {
		r.next = 0
		r.full = true
	}
}

// snapshot returns the buffered lines, oldest first.
func (r *ringBuffer) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return append([]string(nil), r.lines[:r.next]...)
	}
	out := make([]string, 0, len(r.lines))
	out = append(out, r.lines[r.next:]...)
	return append(out, r.lines[:r.next]...)
}

// last returns the most recent line, or "".
func (r *ringBuffer) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.next > 0:
		return r.lines[r.next-1]
	case r.full:
		return r.lines[len(r.lines)-1]
	}
	return ""
}

// telling returns the stderr line that best says why a process failed:
// the last line that reads as an error ("Error: Cannot find module …",
// "ModuleNotFoundError: …", "panic: …"), else the last line that is not
// noise (a runtime's version banner such as "Node.js v20.20.2", a stack
// frame, a caret marker, a closing brace), else the last line; "" if none.
func (r *ringBuffer) telling() string {
	lines := r.snapshot()
	for i := len(lines) - 1; i >= 0; i-- {
		if errorLine.MatchString(lines[i]) {
			return strings.TrimSpace(lines[i])
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if !noiseLine.MatchString(lines[i]) {
			return strings.TrimSpace(lines[i])
		}
	}
	if len(lines) > 0 {
		return lines[len(lines)-1]
	}
	return ""
}

var (
	// errorLine matches a line that states an error.
	errorLine = regexp.MustCompile(`^\s*(\w*(Error|Exception)\b|error\b|Error\b|fatal\b|FATAL\b|panic:|Traceback)`)
	// noiseLine matches lines that never say why: runtime banners, stack
	// frames, markers, blank lines and the tails of printed objects.
	noiseLine = regexp.MustCompile(`^\s*$|^\s*(Node\.js|Bun|Deno|Python) v?\d|^\s+at |^\s*\^+\s*$|^\s*[{}\[\]]+\s*$|^\s*(code|requireStack|errno|syscall|path):`)
)

// lineWriter is the io.Writer given to a child process as its stderr. It
// splits the stream into lines, stores them in a ringBuffer and logs them at
// debug level. One lineWriter is used per process instance, so partial lines
// of a crashed process never merge with output of its successor.
type lineWriter struct {
	ring *ringBuffer
	log  *slog.Logger

	mu  sync.Mutex
	buf []byte
}

// Write implements io.Writer. It never fails.
func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	for len(w.buf) >= maxStderrLine {
		w.emit(w.buf[:maxStderrLine])
		w.buf = w.buf[maxStderrLine:]
	}
	if len(w.buf) == 0 {
		w.buf = nil // release the backing array
	}
	return len(p), nil
}

// flush emits a trailing partial line, if any.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(w.buf)
		w.buf = nil
	}
}

func (w *lineWriter) emit(b []byte) {
	line := strings.TrimRight(string(b), "\r")
	w.ring.add(line)
	w.log.Debug("backend stderr", slog.String("line", line))
}
