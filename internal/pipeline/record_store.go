package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A run record is kept in the run store (isogate://runs/{id}) without the
// text one of its parts repeats of another: [EncodeRecord] leaves it out
// and [DecodeRecord] puts it back, byte for byte, so that whoever reads the
// record (the resource, the console, a replay) sees what the run did as
// json.Marshal of the record writes it. What is left out:
//
//   - a backend result's text block that is its structuredContent as JSON
//     (the TypeScript and Go SDKs send both), or its structuredContent when
//     that is the text's JSON re-encoded (keys sorted, as the gateway
//     re-encodes it): one of the two is kept;
//   - a call's error that is its result's error text (isError);
//   - the part of the run's error message that is a call's error;
//   - the program's result when it is a call's structuredContent, or when
//     output shaping stored the full output (ResultURI): it is read from
//     there ([StoredOutput]), and a record whose stored output expired
//     shows no result.
//
// Each is left out only when putting it back gives the same bytes (checked
// as the record is encoded); a record with nothing left out is encoded as
// plain json.Marshal, as older versions kept every record.

// recordForm is the marker of an encoding that left something out: such a
// record starts with {"form":2,.
const recordForm = 2

var formPrefix = []byte(`{"form":` + strconv.Itoa(recordForm) + `,`)

// storedRecord is a record as the run store keeps it.
type storedRecord struct {
	Form int `json:"form,omitempty"`
	RunRecord
	// ResultCall: Result is the structuredContent of calls[ResultCall-1]
	// (a program that returns what a call answered).
	ResultCall int `json:"result_call,omitempty"`
	// ResultStored: Result is what the output stored under ResultURI
	// records as (ResultOfOutput).
	ResultStored bool         `json:"result_stored,omitempty"`
	Error        *storedError `json:"error,omitempty"`
	Calls        []storedCall `json:"calls"`
}

// storedCall is a call of a stored record.
type storedCall struct {
	CallRecord
	// Derived names the part of Result left out and where it comes from:
	// "text I" (content[I]'s text is the structuredContent), or
	// "structured I AT" (structuredContent, the AT-th key of the result,
	// is content[I]'s text decoded and encoded again).
	Derived string `json:"derived,omitempty"`
	// ErrorFromResult: Error is the result's error text (resultError).
	ErrorFromResult bool `json:"error_from_result,omitempty"`
}

// storedError is a run's error whose message holds a call's error:
// Message + calls[Call-1].Error + Tail.
type storedError struct {
	RunError
	Call int    `json:"message_call,omitempty"`
	Tail string `json:"message_tail,omitempty"`
}

// minErrorRef is the shortest call error a run's error message refers to
// instead of repeating it, and minErrorOmitted the shortest a call leaves
// out as its result's (shorter ones cost less than the mark).
const (
	minErrorRef     = 40
	minErrorOmitted = 24
)

// StoredOutput reads the full output output shaping stored (a record's
// ResultURI, isogate://result/{id}) for the record's owner.
type StoredOutput func(uri string) ([]byte, error)

// EncodeRecord returns rec as the run store keeps it (see the comment
// above storedRecord). stored reads what rec.ResultURI names; nil keeps
// the result in the record. It does not change rec.
func EncodeRecord(rec *RunRecord, stored StoredOutput) ([]byte, error) {
	s := storedRecord{RunRecord: *rec, Calls: make([]storedCall, len(rec.Calls))}
	s.RunRecord.Calls, s.RunRecord.Error = nil, nil
	// saved counts the bytes left out less the marks that say so: a
	// record that would not be shorter is stored plain.
	saved := -len(`"form":2,`)
	var result json.RawMessage // the program's result as written
	if rec.Result.JSON != nil {
		result = written(rec.Result.JSON)
	}
	if rec.ResultURI != "" && stored != nil && !rec.Result.IsZero() {
		if out, err := stored(rec.ResultURI); err == nil && sameBlob(ResultOfOutput(out), rec.Result) {
			s.Result, s.ResultStored = Blob{}, true
			saved += len(result) + len(rec.Result.Truncated) + len(`,"result":`) - len(`,"result_stored":true`)
		}
	}
	for i, c := range rec.Calls {
		sc := storedCall{CallRecord: c}
		if c.Result.JSON != nil {
			// Compared and derived as json.Marshal writes them (compact,
			// HTML-escaped), which is what the record shows.
			res := written(c.Result.JSON)
			if raw, derived := compactResult(res); derived != "" {
				sc.Result, sc.Derived = Blob{JSON: raw}, derived
				saved += len(res) - len(raw) - len(`,"derived":""`) - len(derived)
			}
			if s.ResultCall == 0 && !s.ResultStored && result != nil && structuredOf(res) == string(result) {
				s.Result, s.ResultCall = Blob{}, i+1
				saved += len(result) + len(`,"result":`) - len(`,"result_call":`) - len(strconv.Itoa(i+1))
			}
			if len(c.Error) >= minErrorOmitted && c.Code == "" && errorOfResult(c.Result.JSON) == c.Error {
				sc.Error, sc.ErrorFromResult = "", true
				saved += jsonStringBodyLen(c.Error) + len(`,"error":""`) - len(`,"error_from_result":true`)
			}
		}
		s.Calls[i] = sc
	}
	if rec.Error != nil {
		s.Error = &storedError{RunError: *rec.Error}
		if n, at := errorRef(rec); n > 0 {
			msg, quoted := rec.Error.Message, rec.Calls[n-1].Error
			s.Error.Message, s.Error.Call, s.Error.Tail = msg[:at], n, msg[at+len(quoted):]
			saved += jsonStringBodyLen(quoted) - len(`,"message_call":`) - len(strconv.Itoa(n)) - len(`,"message_tail":""`)
		}
	}
	if saved <= 0 {
		return json.Marshal(rec)
	}
	s.Form = recordForm
	data, err := json.Marshal(&s)
	if err != nil {
		return nil, fmt.Errorf("encoding run record: %w", err)
	}
	return data, nil
}

// written is raw as json.Marshal writes a json.RawMessage: compacted and
// HTML-escaped (raw itself when it is not valid JSON). A recorded value
// (valid JSON: NewBlob checks it) without whitespace or a byte
// HTML-escaping changes is that already.
func written(raw json.RawMessage) json.RawMessage {
	if bytes.IndexAny(raw, " \t\n\r<>&\u2028\u2029") < 0 {
		return raw
	}
	var c, out bytes.Buffer
	if json.Compact(&c, raw) != nil {
		return raw
	}
	json.HTMLEscape(&out, c.Bytes())
	return out.Bytes()
}

// structuredOf is the structuredContent of a recorded CallToolResult as
// written, "" when it has none.
func structuredOf(raw json.RawMessage) string {
	if !bytes.Contains(raw, []byte(`"structuredContent"`)) {
		return ""
	}
	ms, err := members(raw)
	if err != nil {
		return ""
	}
	if i := find(ms, "structuredContent"); i >= 0 {
		return string(ms[i].value)
	}
	return ""
}

// IsCompactRecord reports whether data is a record EncodeRecord shortened
// (one that DecodeRecord must expand before it is shown).
func IsCompactRecord(data []byte) bool { return bytes.HasPrefix(data, formPrefix) }

// ResultOfOutput is what a record keeps as the result of a run whose
// output shaping stored out: the JSON value out renders (compacted), or
// out as a JSON string when it is not JSON (a string the program
// returned), kept as [NewBlob] keeps it.
func ResultOfOutput(out []byte) Blob {
	var b bytes.Buffer
	if json.Compact(&b, out) == nil {
		return NewBlob(b.Bytes())
	}
	s, err := json.Marshal(string(out))
	if err != nil {
		return Blob{}
	}
	return NewBlob(s)
}

// sameBlob reports whether a and b record the same value, as json.Marshal
// writes it.
func sameBlob(a, b Blob) bool {
	if a.JSON != nil || b.JSON != nil {
		return a.JSON != nil && b.JSON != nil && bytes.Equal(written(a.JSON), written(b.JSON))
	}
	return a.Bytes == b.Bytes && a.Truncated == b.Truncated
}

// DecodeRecord reads a record EncodeRecord wrote, or one of an older
// version (plain JSON of a RunRecord), with every part put back; stored
// reads the output a record's result refers to (nil, or an output no
// longer kept: the record shows no result).
func DecodeRecord(data []byte, stored StoredOutput) (*RunRecord, error) {
	if !IsCompactRecord(data) {
		var rec RunRecord
		if err := json.Unmarshal(data, &rec); err != nil {
			return nil, fmt.Errorf("decoding run record: %w", err)
		}
		return &rec, nil
	}
	var s storedRecord
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("decoding run record: %w", err)
	}
	rec := s.RunRecord
	rec.Calls = make([]CallRecord, len(s.Calls))
	for i, sc := range s.Calls {
		c := sc.CallRecord
		if sc.Derived != "" {
			raw, err := expandResult(c.Result.JSON, sc.Derived)
			if err != nil {
				return nil, fmt.Errorf("decoding run record %s, call %d: %w", rec.ID, c.Seq, err)
			}
			c.Result = Blob{JSON: raw}
		}
		if sc.ErrorFromResult {
			c.Error = errorOfResult(c.Result.JSON)
		}
		rec.Calls[i] = c
	}
	if s.ResultStored && stored != nil {
		if out, err := stored(rec.ResultURI); err == nil {
			rec.Result = ResultOfOutput(out)
		}
	}
	if n := s.ResultCall; n > 0 {
		if n > len(rec.Calls) || structuredOf(rec.Calls[n-1].Result.JSON) == "" {
			return nil, fmt.Errorf("decoding run record %s: its result refers to call %d, which has no structuredContent", rec.ID, n)
		}
		rec.Result = Blob{JSON: json.RawMessage(structuredOf(rec.Calls[n-1].Result.JSON))}
	}
	if s.Error != nil {
		e := s.Error.RunError
		if n := s.Error.Call; n > 0 {
			if n > len(rec.Calls) {
				return nil, fmt.Errorf("decoding run record %s: its error refers to call %d of %d", rec.ID, n, len(rec.Calls))
			}
			e.Message += rec.Calls[n-1].Error + s.Error.Tail
		}
		rec.Error = &e
	}
	return &rec, nil
}

// errorRef finds the call whose error the run's error message holds (the
// longest such, at least minErrorRef bytes): its number (index + 1) and
// where the message holds it; 0 when none does.
func errorRef(rec *RunRecord) (n, at int) {
	best := 0
	for i, c := range rec.Calls {
		if len(c.Error) < minErrorRef || len(c.Error) <= best {
			continue
		}
		if j := strings.Index(rec.Error.Message, c.Error); j >= 0 {
			n, at, best = i+1, j, len(c.Error)
		}
	}
	return n, at
}

// errorOfResult is the error text RecordStage records for a result that
// is an error (isError), "" for one that is not.
func errorOfResult(raw json.RawMessage) string {
	var res mcp.CallToolResult
	if json.Unmarshal(raw, &res) != nil || !res.IsError {
		return ""
	}
	return resultError(&res)
}

// member is one key of a JSON object and its value as written.
type member struct {
	key   string
	value json.RawMessage
}

// object writes members as a compact JSON object.
func object(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// array writes items as a compact JSON array.
func array(items []json.RawMessage) []byte {
	b := []byte{'['}
	for i, item := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, item...)
	}
	return append(b, ']')
}

// find returns the index of key in ms, or -1.
func find(ms []member, key string) int {
	for i, m := range ms {
		if m.key == key {
			return i
		}
	}
	return -1
}

// textBlock is a content block that is only a text.
type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// textPrefix starts a content block that is only a text, as encoding/json
// writes one.
const textPrefix = `{"type":"text","text":`

// plainText returns the text of a content block that holds a type "text"
// and a text and nothing else.
func plainText(item json.RawMessage) (string, bool) {
	if bytes.HasPrefix(item, []byte(textPrefix)) {
		if end, err := skipString(item, len(textPrefix)); err == nil && end == len(item)-1 && item[end] == '}' {
			text, err := unquote(item[len(textPrefix):end])
			return text, err == nil
		}
	}
	ms, err := members(item)
	if err != nil || len(ms) != 2 {
		return "", false
	}
	var b textBlock
	if json.Unmarshal(item, &b) != nil || b.Type != "text" || find(ms, "type") < 0 || find(ms, "text") < 0 {
		return "", false
	}
	return b.Text, true
}

// compactResult leaves out of a recorded CallToolResult a text block that
// repeats its structuredContent (or the structuredContent its text block
// repeats), and says which (see storedCall.Derived); derived is "" and raw
// comes back unchanged when nothing repeats, or when expanding it again
// would not give raw byte for byte.
func compactResult(raw json.RawMessage) (json.RawMessage, string) {
	if !bytes.Contains(raw, []byte(`"structuredContent"`)) {
		return raw, ""
	}
	ms, err := members(raw)
	if err != nil {
		return raw, ""
	}
	ci, si := find(ms, "content"), find(ms, "structuredContent")
	if ci < 0 || si < 0 {
		return raw, ""
	}
	blocks, err := items(ms[ci].value)
	if err != nil {
		return raw, ""
	}
	for i, item := range blocks {
		text, ok := plainText(item)
		if !ok {
			continue
		}
		var out []member
		var derived string
		switch {
		case text == string(ms[si].value):
			rest := append(append([]json.RawMessage(nil), blocks[:i]...), blocks[i+1:]...)
			out = append([]member(nil), ms...)
			out[ci].value = array(rest)
			derived = fmt.Sprintf("text %d", i)
		case reencoded(text) == string(ms[si].value):
			out = append(append([]member(nil), ms[:si]...), ms[si+1:]...)
			derived = fmt.Sprintf("structured %d %d", i, si)
		default:
			continue
		}
		small := object(out)
		if back, err := expandResult(small, derived); err != nil || !bytes.Equal(back, raw) {
			return raw, ""
		}
		return small, derived
	}
	return raw, ""
}

// reencoded is text decoded as JSON and encoded again, as the gateway
// encodes a structuredContent it received ("" when text is not JSON).
func reencoded(text string) string {
	t := strings.TrimSpace(text)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return ""
	}
	var v any
	if json.Unmarshal([]byte(t), &v) != nil {
		return ""
	}
	out, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(out)
}

// expandResult puts back into a recorded CallToolResult the part
// compactResult left out.
func expandResult(raw json.RawMessage, derived string) (json.RawMessage, error) {
	f := strings.Fields(derived)
	nums := make([]int, len(f)-1)
	for i := range nums {
		n, err := strconv.Atoi(f[i+1])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad derived part %q", derived)
		}
		nums[i] = n
	}
	ms, err := members(raw)
	if err != nil {
		return nil, fmt.Errorf("recorded result: %w", err)
	}
	ci := find(ms, "content")
	if ci < 0 {
		return nil, errors.New("recorded result has no content")
	}
	blocks, err := items(ms[ci].value)
	if err != nil {
		return nil, fmt.Errorf("recorded result's content: %w", err)
	}
	switch {
	case f[0] == "text" && len(nums) == 1 && nums[0] <= len(blocks):
		si := find(ms, "structuredContent")
		if si < 0 {
			return nil, errors.New("recorded result has no structuredContent")
		}
		block, err := json.Marshal(textBlock{Type: "text", Text: string(ms[si].value)})
		if err != nil {
			return nil, err
		}
		i := nums[0]
		blocks = append(blocks[:i], append([]json.RawMessage{block}, blocks[i:]...)...)
		ms[ci].value = array(blocks)
		return object(ms), nil
	case f[0] == "structured" && len(nums) == 2 && nums[0] < len(blocks) && nums[1] <= len(ms):
		text, ok := plainText(blocks[nums[0]])
		structured := reencoded(text)
		if !ok || structured == "" {
			return nil, errors.New("recorded result's text is not the JSON of its structuredContent")
		}
		at := nums[1]
		ms = append(ms[:at], append([]member{{"structuredContent", json.RawMessage(structured)}}, ms[at:]...)...)
		return object(ms), nil
	}
	return nil, fmt.Errorf("bad derived part %q", derived)
}
