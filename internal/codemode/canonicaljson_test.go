package codemode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/jssyntax"
)

// referenceCanonicalJSON is the token-by-token implementation canonicalJSON
// replaced (32 µs for 7 bytes, 58 ms per MB): the oracle its output must
// match byte for byte.
func referenceCanonicalJSON(raw []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	if err := referenceValue(dec, &out); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("invalid JSON: trailing data")
	}
	return out.Bytes(), nil
}

func referenceValue(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		open, close := byte(t), byte(']')
		if t == '{' {
			close = '}'
		}
		out.WriteByte(open)
		for first := true; dec.More(); first = false {
			if !first {
				out.WriteByte(',')
			}
			if open == '{' {
				key, err := dec.Token()
				if err != nil {
					return err
				}
				out.Write(jssyntax.AppendString(nil, key.(string)))
				out.WriteByte(':')
			}
			if err := referenceValue(dec, out); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		out.WriteByte(close)
	case string:
		out.Write(jssyntax.AppendString(nil, t))
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return err
		}
		b, err := json.Marshal(f)
		if err != nil {
			return err
		}
		out.Write(b)
	case bool:
		out.WriteString(fmt.Sprint(t))
	case nil:
		out.WriteString("null")
	}
	return nil
}

// canonicalSeeds are the fuzz seed corpus, also run as a regular test.
var canonicalSeeds = []string{
	`1`, `-0`, `0`, `-1`, `123456789012345`, `1234567890123456`, `12345678901234567890`,
	`9007199254740993`, `1.0`, `1.5e3`, `1E+2`, `1e-7`, `0.000001`, `1e21`, `1e20`, `-1.25e-10`,
	`1e400`, `-1e400`, `1e-400`, `0.1`, `3.14159265358979323846`, `100e-2`,
	`""`, `"abc"`, `"a\"b"`, `"\u00e9\n\t\/"`, `"\u2028"`, `"é"`, "\"\xff\xfe\"", `"\ud800"`,
	`"\ud83d\ude00"`, `"\u0000\u001f"`, `"\b\f\r"`,
	`true`, `false`, `null`, ` [ 1 , 2 ] `, `{}`, `[]`, `{"a":1,"a":2}`,
	`{"b": {"c": [true, false, null, "x", 1.50]}, "a": []}`, "\n{\"k\"\t:\r\n\"v\"}\n",
	`[1,]`, `{"a" 1}`, `{"a":1,}`, `[1 2]`, `{1:2}`, `01`, `-`, `1.`, `.5`, `1e`, `+1`,
	`"unterminated`, `tru`, `nul`, `[`, `{`, `]`, `1 2`, ``, ` `, `"a` + "\x01" + `"`, `[1]x`,
	`NaN`, `Infinity`, `"\x"`, `"\u12"`,
	`0.5`, `-0.5`, `123.25`, `-0.000001`, `0.0000015`, `0.0000001`, `0.10`, `-0.0`, `0.30000000000000004`,
	`123456789012.345`, `1234567890123.456`, `0.123456789012345`, `0.1234567890123456`,
	`0.00000123456789012345`, `999999999999999.9`, `99999999999999.9`, `1.000000000000001`,
}

// Decimals without an exponent are copied as written when they print so
// (canonicalizer.number's plainDecimal): every length of whole and
// fraction around the 15-digit and 1e-6 bounds, against the reference.
func TestCanonicalJSON_DecimalsAsWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	digits := func(n int, lead bool) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		if lead && n > 0 && b[0] == '0' {
			b[0] = '1' + byte(rng.IntN(9))
		}
		return string(b)
	}
	for whole := 0; whole <= 17; whole++ {
		for frac := 1; frac <= 18; frac++ {
			for range 40 {
				w := "0"
				if whole > 0 {
					w = digits(whole, true)
				}
				f := digits(frac, false)
				if rng.IntN(3) == 0 { // leading zeros in the fraction, around 1e-6
					f = strings.Repeat("0", rng.IntN(8)) + f
				}
				sign := ""
				if rng.IntN(2) == 0 {
					sign = "-"
				}
				checkCanonical(t, []byte(sign+w+"."+f))
			}
		}
	}
}

// checkCanonical compares canonicalJSON with the reference on valid JSON,
// and requires an error on invalid JSON.
func checkCanonical(t *testing.T, in []byte) {
	t.Helper()
	got, err := canonicalJSON(in)
	if !json.Valid(in) {
		if err == nil {
			t.Fatalf("canonicalJSON(%q) = %q, want an error (invalid JSON)", in, got)
		}
		return
	}
	want, wantErr := referenceCanonicalJSON(in)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("canonicalJSON(%q): error %v, reference error %v", in, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("canonicalJSON(%q)\n got %q\nwant %q", in, got, want)
	}
}

func TestCanonicalJSON_MatchesReference(t *testing.T) {
	for _, s := range canonicalSeeds {
		checkCanonical(t, []byte(s))
	}
}

func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkCanonical(t, in)
	})
}

func TestCanonicalJSON_BoundsNesting(t *testing.T) {
	ok := strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth)
	checkCanonical(t, []byte(ok))
	deep := strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1)
	if _, err := canonicalJSON([]byte(deep)); err == nil {
		t.Fatal("nesting beyond the limit was accepted")
	}
}

// canonicalBenchDoc is about 1 MB of a typical tool result.
func canonicalBenchDoc() []byte {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := 0; b.Len() < 1<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item %d","price":%d.25,"tags":["a","b\n"],"ok":true,"note":null}`, i, i, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func BenchmarkCanonicalJSON(b *testing.B) {
	doc := canonicalBenchDoc()
	for _, c := range []struct {
		name string
		fn   func([]byte) (json.RawMessage, error)
		in   []byte
	}{
		{"small", canonicalJSON, []byte(`"hello"`)},
		{"small-reference", referenceCanonicalJSON, []byte(`"hello"`)},
		{"1MB", canonicalJSON, doc},
		{"1MB-reference", referenceCanonicalJSON, doc},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.in)))
			for b.Loop() {
				if _, err := c.fn(c.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
