package procpool

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/v8sandbox"
)

// The parent writes run frames by hand (encodeRun), byte for byte as
// encodeFrame, and a worker decodes them without encoding/json
// (decodeRun), into exactly what encoding/json makes of them: sources with
// escapes, invalid UTF-8, HTML characters, preludes, functions and every
// combination of limits.
func TestRunFramesDecodeLikeEncodingJSON(t *testing.T) {
	limits := v8sandbox.Limits{Timeout: 30 * time.Second, HeapMB: 50, ArrayBufferMB: 64, MaxResultBytes: 16 << 20}
	jobs := []struct {
		job v8sandbox.Job
		ref string
	}{
		{v8sandbox.Job{Source: "return 1;", Origin: "main.js", AwaitResult: true, Limits: limits}, ""},
		{v8sandbox.Job{Source: "1 + 1"}, ""},
		{v8sandbox.Job{Source: ""}, "ref"},
		{v8sandbox.Job{Source: `say("q\"uote", '\\', "\n\t\r", "<b>&</b>", "\u2028\u2029", "é日本🙂")`, Origin: `we"ird.js`,
			Prelude: "globalThis.x = `\x01\x1f`;", AwaitResult: true,
			Functions: []v8sandbox.Function{{Name: "api.echo", Async: true}, {Name: "sync"}, {Name: `n"a\me`}},
			Limits:    v8sandbox.Limits{Timeout: 1, MaxResultBytes: 9}}, "0123456789abcdef"},
		{v8sandbox.Job{Source: "bad \xff\xfe utf-8 \xc3", Functions: []v8sandbox.Function{{Name: "only", Async: true}},
			Limits: v8sandbox.Limits{HeapMB: 16}}, ""},
		{v8sandbox.Job{Source: strings.Repeat("x", 100000), Prelude: strings.Repeat("é", 50000),
			Limits: v8sandbox.Limits{ArrayBufferMB: 1}}, "p"},
		{v8sandbox.Job{Source: "s", Limits: v8sandbox.Limits{Timeout: 1<<63 - 1, HeapMB: 1 << 40}}, ""},
		{v8sandbox.Job{Source: `"quoted"`, Origin: `C:\dir\main.js`, Prelude: "tab\there", Functions: []v8sandbox.Function{{Name: "del\x7f"}}}, `r\`},
		{v8sandbox.Job{Source: "principal is never sent", Principal: "alice", Functions: []v8sandbox.Function{}}, ""},
	}
	for i, c := range jobs {
		frame, err := encodeFrame(&message{Type: msgRun, ID: uint64(i + 1), Job: &c.job, PreludeRef: c.ref})
		if err != nil {
			t.Fatal(err)
		}
		if hand, err := encodeRun(uint64(i+1), &c.job, c.ref); err != nil || string(hand) != string(frame) {
			t.Errorf("job %d: encodeRun wrote %s (%v), encodeFrame %s", i, clip(hand[4:]), err, clip(frame[4:]))
		}
		body := frame[4:]
		want := new(message)
		if err := json.Unmarshal(body, want); err != nil {
			t.Fatal(err)
		}
		got := decodeRun(body)
		if got == nil {
			t.Errorf("job %d: decodeRun left %s to encoding/json", i, clip(body))
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("job %d: decodeRun made %+v (job %+v), encoding/json %+v (job %+v)", i, got, got.Job, want, want.Job)
		}
		if m, err := readOne(frame, true); err != nil || !reflect.DeepEqual(m, want) {
			t.Errorf("job %d: a worker's frame reader made %+v, %v", i, m, err)
		}
	}
}

// Anything but encodeFrame's own layout of a run message is left to
// encoding/json, which decodes it as before.
func TestRunFramesOfOtherLayoutsGoThroughEncodingJSON(t *testing.T) {
	for _, body := range []string{
		`{"type":"run","id":1,"job":{"source":"s","limits":{}}}x`,
		`{"type":"run","id":1,"job":{"source":"s","limits":{}} }`,
		`{"type":"run","id":1,"job":{"limits":{},"source":"s"}}`,
		`{"type":"run","id":1,"job":{"source":"s","limits":{"timeout":-1}}}`,
		`{"type":"run","id":1,"job":{"source":"s","limits":{"timeout":1.5}}}`,
		`{"type":"run","id":1,"job":{"source":"s","limits":{"heap_mb":1,"timeout":2}}}`,
		`{"type":"run","id":1,"job":{"source":"s","limits":{"timeout":01}}}`,
		`{"type":"run","id":1,"job":{"source":"s","functions":[],"limits":{}}}`,
		`{"type":"run","id":1,"job":{"source":"s","await_result":false,"limits":{}}}`,
		`{"type":"run","id":1,"job":{"source":"s` + "\x01" + `","limits":{}}}`,
		`{"type":"run","id":1,"job":{"source":"s\`,
		`{"type":"run","id":1,"job":{"source":"s\u00zz","limits":{}}}`,
		`{"type":"run","id":1,"job":{"source":"s","limits":{}},"prelude_ref":"r","extra":1}`,
		`{"type":"run","id":0,"job":{"source":"s","limits":{}}}`,
		`{"id":1,"type":"run","job":{"source":"s","limits":{}}}`,
		`{"type":"taken","id":1}`,
	} {
		if m := decodeRun([]byte(body)); m != nil {
			t.Errorf("decodeRun(%s) = %+v (job %+v), want nil (left to encoding/json)", body, m, m.Job)
		}
	}
}

// takenFrame writes what encodeFrame would, and a worker reads it back
// without encoding/json.
func TestTakenFrame(t *testing.T) {
	for _, id := range []uint64{1, 42, 1<<64 - 1} {
		want, _ := encodeFrame(&message{Type: msgTaken, ID: id})
		got := takenFrame(id)
		if string(got) != string(want) {
			t.Errorf("takenFrame(%d) = %q, encodeFrame %q", id, got, want)
		}
		if m := decodeTaken(got[4:]); m == nil || !reflect.DeepEqual(m, &message{Type: msgTaken, ID: id}) {
			t.Errorf("decodeTaken(%q) = %+v", got[4:], m)
		}
	}
	for _, body := range []string{`{"type":"taken","id":1,"x":2}`, `{"type":"taken","id":0}`, `{"type":"taken","id":1} `} {
		if m := decodeTaken([]byte(body)); m != nil {
			t.Errorf("decodeTaken(%s) = %+v, want nil", body, m)
		}
	}
}

// BenchmarkRunFrameEncode encodes a trivial job's run frame as the parent
// does, and through encoding/json as before.
func BenchmarkRunFrameEncode(b *testing.B) {
	job := v8sandbox.Job{Source: "return 1;", Origin: "main.js", AwaitResult: true,
		Functions: []v8sandbox.Function{{Name: "echo", Async: true}},
		Limits:    v8sandbox.Limits{Timeout: 30 * time.Second, HeapMB: 50, ArrayBufferMB: 64, MaxResultBytes: 16 << 20}}
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			if _, err := encodeRun(12, &job, "0123456789abcdef"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if _, err := encodeFrame(&message{Type: msgRun, ID: 12, Job: &job, PreludeRef: "0123456789abcdef"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRunFrameDecode decodes a trivial job's run frame as a worker
// does, and through encoding/json as before.
func BenchmarkRunFrameDecode(b *testing.B) {
	job := v8sandbox.Job{Source: "return 1;", Origin: "main.js", AwaitResult: true,
		Functions: []v8sandbox.Function{{Name: "echo", Async: true}},
		Limits:    v8sandbox.Limits{Timeout: 30 * time.Second, HeapMB: 50, ArrayBufferMB: 64, MaxResultBytes: 16 << 20}}
	frame, _ := encodeFrame(&message{Type: msgRun, ID: 12, Job: &job, PreludeRef: "0123456789abcdef"})
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			if decodeRun(frame[4:]) == nil {
				b.Fatal("not decoded")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if err := json.Unmarshal(frame[4:], new(message)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// readOne reads frame through a frame reader, a worker's when fromParent.
func readOne(frame []byte, fromParent bool) (*message, error) {
	fr := newFrameReader(bytes.NewReader(frame))
	fr.fromParent = fromParent
	return fr.read()
}
