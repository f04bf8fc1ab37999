package output

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a manually advanced clock for Store tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestStorePutGet(t *testing.T) {
	s := NewStore(time.Minute, 1000)
	id, ok := s.Put("sess", "hello")
	if !ok || id == "" {
		t.Fatalf("Put = %q, %v", id, ok)
	}
	if got, ok := s.Get("sess", id); !ok || got != "hello" {
		t.Fatalf("Get = %q, %v; want hello, true", got, ok)
	}
	if _, ok := s.Get("sess", "0000000000000000"); ok {
		t.Fatalf("Get of an unknown id succeeded")
	}
	if s.Len() != 1 || s.Bytes() != 5 {
		t.Fatalf("Len, Bytes = %d, %d; want 1, 5", s.Len(), s.Bytes())
	}
}

func TestStoreDefaults(t *testing.T) {
	s := NewStore(0, -1)
	if s.ttl != DefaultStoreTTL || s.MaxBytes() != DefaultStoreMaxBytes {
		t.Fatalf("defaults: ttl %v max %d", s.ttl, s.MaxBytes())
	}
	if DefaultStoreTTL != 15*time.Minute || DefaultStoreMaxBytes != 64*1024*1024 {
		t.Fatalf("default constants changed")
	}
}

func TestStoreTTLExpiry(t *testing.T) {
	clk := newFakeClock()
	s := NewStore(10*time.Minute, 1000, WithClock(clk.Now))
	a, _ := s.Put("", "first")
	clk.Advance(4 * time.Minute)
	b, _ := s.Put("", "second")
	clk.Advance(6*time.Minute - time.Nanosecond)
	if _, ok := s.Get("", a); !ok {
		t.Fatalf("entry expired before its TTL")
	}
	clk.Advance(time.Nanosecond) // a is exactly 10m old
	if _, ok := s.Get("", a); ok {
		t.Fatalf("entry still readable at its TTL")
	}
	if _, ok := s.Get("", b); !ok {
		t.Fatalf("younger entry expired early")
	}
	if s.Len() != 1 || s.Bytes() != len("second") {
		t.Fatalf("after expiry Len, Bytes = %d, %d", s.Len(), s.Bytes())
	}
	clk.Advance(4 * time.Minute)
	if _, ok := s.Get("", b); ok || s.Len() != 0 || s.Bytes() != 0 {
		t.Fatalf("second entry not expired: Len %d Bytes %d", s.Len(), s.Bytes())
	}
}

func TestStoreExpiryWithClockGoingBack(t *testing.T) {
	clk := newFakeClock()
	s := NewStore(time.Minute, 1000, WithClock(clk.Now))
	clk.Advance(time.Hour)
	young, _ := s.Put("", "young") // stored "later", then the clock goes back
	clk.Advance(-time.Hour)
	old, _ := s.Put("", "old")
	clk.Advance(time.Hour + 30*time.Second) // old is expired, young is 30s old
	if _, ok := s.Get("", old); ok {
		t.Fatalf("expired entry behind a younger one was returned")
	}
	if _, ok := s.Get("", young); !ok {
		t.Fatalf("live entry lost")
	}
}

func TestStoreSizeEviction(t *testing.T) {
	s := NewStore(time.Hour, 100)
	a, _ := s.Put("", strings.Repeat("a", 40))
	b, _ := s.Put("", strings.Repeat("b", 40))
	c, ok := s.Put("", strings.Repeat("c", 40)) // 120 > 100: evict a
	if !ok {
		t.Fatalf("Put c failed")
	}
	if _, ok := s.Get("", a); ok {
		t.Errorf("oldest entry not evicted")
	}
	for _, id := range []string{b, c} {
		if _, ok := s.Get("", id); !ok {
			t.Errorf("entry %s evicted too", id)
		}
	}
	if s.Bytes() != 80 {
		t.Errorf("Bytes = %d, want 80", s.Bytes())
	}
	d, ok := s.Put("", strings.Repeat("d", 100)) // exactly the limit: evicts all
	if !ok || s.Len() != 1 || s.Bytes() != 100 {
		t.Fatalf("Put of exactly max: ok %v Len %d Bytes %d", ok, s.Len(), s.Bytes())
	}
	if id, ok := s.Put("", strings.Repeat("e", 101)); ok || id != "" {
		t.Fatalf("Put larger than max = %q, %v; want refused", id, ok)
	}
	if _, ok := s.Get("", d); !ok {
		t.Fatalf("refused Put evicted an entry")
	}
}

func TestStoreOwnerIsolation(t *testing.T) {
	s := NewStore(time.Hour, 1000)
	id, _ := s.Put("alice", `{"secret":1}`)
	if _, ok := s.Get("bob", id); ok {
		t.Fatalf("bob read alice's result")
	}
	if _, ok := s.Get("", id); ok {
		t.Fatalf("empty owner read alice's result")
	}
	if _, err := s.GetPath("bob", id, "secret"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetPath by another owner: err %v, want ErrNotFound", err)
	}
	if got, ok := s.Get("alice", id); !ok || got != `{"secret":1}` {
		t.Fatalf("owner cannot read own result")
	}
	pub, _ := s.Put("", "public")
	if _, ok := s.Get("alice", pub); ok {
		t.Fatalf("owner alice read the empty owner's result")
	}
}

func TestStoreIDsAreRandom(t *testing.T) {
	hex16 := regexp.MustCompile(`^[0-9a-f]{16}$`)
	s1, s2 := NewStore(time.Hour, 1<<20), NewStore(time.Hour, 1<<20)
	seen := map[string]bool{}
	for i := range 2000 {
		for _, s := range []*Store{s1, s2} {
			id, _ := s.Put("", "x")
			if !hex16.MatchString(id) {
				t.Fatalf("id %q is not 16 hex chars", id)
			}
			if seen[id] {
				t.Fatalf("duplicate id %q after %d puts", id, i)
			}
			seen[id] = true
		}
	}
	// Random ids use every hex digit in every position; a counter or a
	// timestamp would not.
	for pos := range 16 {
		digits := map[byte]bool{}
		for id := range seen {
			digits[id[pos]] = true
		}
		if len(digits) < 16 {
			t.Errorf("position %d only ever holds %d distinct digits", pos, len(digits))
		}
	}
}

func TestStoreIDCollisionRetries(t *testing.T) {
	s := NewStore(time.Hour, 1000)
	ids := []string{"aaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"}
	s.newID = func() string { id := ids[0]; ids = ids[1:]; return id }
	a, _ := s.Put("", "1")
	b, _ := s.Put("", "2")
	if a == b || b != "bbbbbbbbbbbbbbbb" {
		t.Fatalf("ids %q, %q: collision not retried", a, b)
	}
}

const pathDoc = `{
  "results": {"items": [{"id": 1, "name": "one"}, {"id": 2, "name": "two", "tags": ["x", "y"]}], "total": 2},
  "a/b": {"c": true},
  "7": "seven",
  "note": "<b>&amp;</b>"
}`

func TestStoreGetPath(t *testing.T) {
	s := NewStore(time.Hour, 1<<20)
	id, _ := s.Put("o", pathDoc)
	cases := []struct{ path, want string }{
		{"results/items/1/name", `"two"`},
		{"/results/items/1/tags/", "[\n  \"x\",\n  \"y\"\n]"},
		{"results/items/0", "{\n  \"id\": 1,\n  \"name\": \"one\"\n}"},
		{"results/total", "2"},
		{"a%2Fb/c", "true"},
		{"7", `"seven"`},
		{"note", `"<b>&amp;</b>"`},
	}
	for _, c := range cases {
		got, err := s.GetPath("o", id, c.path)
		if err != nil || got != c.want {
			t.Errorf("GetPath(%q) = %q, %v; want %q", c.path, got, err, c.want)
		}
	}
	whole, err := s.GetPath("o", id, "")
	if err != nil || !strings.HasPrefix(whole, "{\n  \"results\": {\n    \"items\": [") {
		t.Errorf("GetPath(\"\") = %q, %v; want the whole document pretty-printed in key order", whole, err)
	}
}

func TestStoreGetPathErrors(t *testing.T) {
	s := NewStore(time.Hour, 1<<20)
	id, _ := s.Put("", pathDoc)
	text, _ := s.Put("", "plain text, not JSON")
	cases := []struct {
		id, path string
		is       error
		msg      string
	}{
		{id, "results/items/5", ErrBadPath, `at "results/items": index 5 out of range (array has 2 items)`},
		{id, "results/items/first", ErrBadPath, `"first" is not an array index (array has 2 items)`},
		{id, "results/items/-1", ErrBadPath, "is not an array index"},
		{id, "results/nope", ErrBadPath, `at "results": no key "nope" (keys: items, total)`},
		{id, "results/total/x", ErrBadPath, `value is a number, cannot look up "x"`},
		{id, "note/x", ErrBadPath, `at "note": value is a string`},
		{id, "missing", ErrBadPath, "at the top level"},
		{text, "a", ErrNotJSON, ""},
		{"ffffffffffffffff", "a", ErrNotFound, ""},
	}
	for _, c := range cases {
		_, err := s.GetPath("", c.id, c.path)
		if !errors.Is(err, c.is) {
			t.Errorf("GetPath(%q): err %v, want %v", c.path, err, c.is)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("GetPath(%q): error %q does not mention %q", c.path, err, c.msg)
		}
	}
}

func TestStoreConcurrent(t *testing.T) {
	s := NewStore(time.Hour, 50_000)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			owner := fmt.Sprint("owner", g)
			for i := range 200 {
				data := fmt.Sprintf(`{"g":%d,"i":%d}`, g, i)
				id, ok := s.Put(owner, data)
				if !ok {
					t.Error("Put failed")
					return
				}
				if got, ok := s.Get(owner, id); ok && got != data {
					t.Errorf("Get returned another entry's data")
				}
				s.GetPath(owner, id, "i")
				s.Len()
			}
		})
	}
	wg.Wait()
	if s.Bytes() > 50_000 {
		t.Fatalf("Bytes %d over the limit", s.Bytes())
	}
}

func TestResultURI(t *testing.T) {
	if got := ResultURI("abc", ""); got != "isogate://result/abc" {
		t.Errorf("ResultURI = %q", got)
	}
	if got := ResultURI("abc", "/results/items/3"); got != "isogate://result/abc/results/items/3" {
		t.Errorf("ResultURI with path = %q", got)
	}
	id, path, err := ParseResultURI("isogate://result/abc/results/items/3")
	if err != nil || id != "abc" || path != "results/items/3" {
		t.Errorf("ParseResultURI = %q, %q, %v", id, path, err)
	}
	id, path, err = ParseResultURI("isogate://result/abc")
	if err != nil || id != "abc" || path != "" {
		t.Errorf("ParseResultURI without path = %q, %q, %v", id, path, err)
	}
	for _, bad := range []string{"isogate://other/abc", "isogate://result/", "isogate://result//x"} {
		if _, _, err := ParseResultURI(bad); !errors.Is(err, ErrBadPath) {
			t.Errorf("ParseResultURI(%q): err %v, want ErrBadPath", bad, err)
		}
	}
}
