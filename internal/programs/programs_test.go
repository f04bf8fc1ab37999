package programs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/internal/programs"
	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/v8sandbox"
)

var (
	redisServer *redistest.Server
	redisSkip   error
)

func TestMain(m *testing.M) {
	redisServer, redisSkip = redistest.Start()
	code := m.Run()
	if redisServer != nil {
		redisServer.Stop()
	}
	os.Exit(code)
}

// planOf is the vetting of these tests: they are about keeping programs,
// not checking them (the gateway's tests vet with the real checker and
// policy). It names the tools the code mentions as backend.tool(.
type planOf struct{}

func (planOf) Vet(_ context.Context, _, code string) (*programs.Vetting, error) {
	var calls []string
	for _, f := range strings.Fields(code) {
		if i := strings.Index(f, "("); i > 0 && strings.Count(f[:i], ".") == 1 && !strings.HasPrefix(f, "args") {
			calls = append(calls, strings.TrimPrefix(f[:i], "await"))
		}
	}
	return &programs.Vetting{Calls: calls}, nil
}

func caller(name string, groups ...string) programs.Caller {
	return programs.Caller{Principal: &authn.Principal{Name: name, Groups: groups}}
}

func admin(name string) programs.Caller {
	c := caller(name)
	c.Admin = true
	return c
}

func save(t testing.TB, p *programs.Programs, c programs.Caller, name, desc, code string) *programs.Version {
	t.Helper()
	v, err := p.Save(context.Background(), c, programs.SaveInput{Name: name, Description: desc, Code: code})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func names(t *testing.T, p *programs.Programs, c programs.Caller) []string {
	t.Helper()
	l, err := p.List(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range l {
		out = append(out, fmt.Sprintf("%s@%d", x.Name, x.Version))
	}
	return out
}

func wantCode(t *testing.T, err error, code v8sandbox.Code) {
	t.Helper()
	if got := v8sandbox.CodeOf(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

func TestVersionsAndCurrent(t *testing.T) {
	ctx := context.Background()
	p := programs.New(programs.Options{Store: kv.NewMemory(), Vet: planOf{}})
	alice := caller("alice")
	v1 := save(t, p, alice, "weekly_report", "first", "return await github.list_issues({})")
	v2 := save(t, p, alice, "weekly_report", "second", "return await github.search_issues({q: args.q})")
	if v1.Version != 1 || v2.Version != 2 || v2.Ref() != "weekly_report@2" {
		t.Fatalf("versions %d, %d", v1.Version, v2.Version)
	}
	if got := names(t, p, alice); !slices.Equal(got, []string{"weekly_report@2"}) {
		t.Fatalf("listed %v: the latest is current", got)
	}
	cur, err := p.Resolve(ctx, alice, "weekly_report")
	if err != nil || cur.Version != 2 || cur.Description != "second" || !slices.Equal(cur.Calls, []string{"github.search_issues"}) {
		t.Fatalf("current: %+v, %v", cur, err)
	}
	old, err := p.Resolve(ctx, alice, "weekly_report@1")
	if err != nil || old.Code != v1.Code {
		t.Fatalf("@1: %+v, %v", old, err)
	}
	if err := p.SetCurrent(ctx, alice, "weekly_report", 1); err != nil {
		t.Fatal(err)
	}
	if cur, _ := p.Resolve(ctx, alice, "weekly_report"); cur.Version != 1 {
		t.Fatalf("after making 1 current, resolved %d", cur.Version)
	}
	// A new save after that is version 3, current; 1 and 2 unchanged.
	save(t, p, alice, "weekly_report", "third", "return 3")
	head, versions, err := p.Versions(ctx, alice, "", "weekly_report")
	if err != nil || head.Latest != 3 || head.Current != 3 || len(versions) != 3 || versions[1].Description != "second" {
		t.Fatalf("versions: %+v %d, %v", head, len(versions), err)
	}
	_, err = p.Resolve(ctx, alice, "weekly_report@9")
	wantCode(t, err, programs.CodeNotFound)
	wantCode(t, p.SetCurrent(ctx, alice, "weekly_report", 9), programs.CodeNotFound)
	_, err = p.Resolve(ctx, alice, "weekly_report@x")
	wantCode(t, err, programs.CodeInvalid)
}

func TestPrivateUntilPublished(t *testing.T) {
	ctx := context.Background()
	p := programs.New(programs.Options{Store: kv.NewMemory(), Vet: planOf{}})
	alice, bob, carol := caller("alice"), caller("bob", "eng"), caller("carol")
	save(t, p, alice, "refund", "v1", "return 1")
	save(t, p, alice, "refund", "v2", "return 2")
	if got := names(t, p, bob); len(got) != 0 {
		t.Fatalf("bob sees alice's private programs: %v", got)
	}
	_, err := p.Resolve(ctx, bob, "refund")
	wantCode(t, err, programs.CodeNotFound)
	// Only an admin publishes; alice may not publish her own either.
	wantCode(t, p.Publish(ctx, alice, "alice", "refund", 1, []string{"*"}), programs.CodeForbidden)
	if err := p.Publish(ctx, admin("root"), "alice", "refund", 1, []string{"group:eng"}); err != nil {
		t.Fatal(err)
	}
	if got := names(t, p, bob); !slices.Equal(got, []string{"refund@1"}) {
		t.Fatalf("bob (group eng) lists %v, want the published version 1", got)
	}
	if got := names(t, p, carol); len(got) != 0 {
		t.Fatalf("carol is not in the audience: %v", got)
	}
	v, err := p.Resolve(ctx, bob, "refund")
	if err != nil || v.Version != 1 || v.Owner != "alice" {
		t.Fatalf("bob resolves %+v, %v", v, err)
	}
	_, err = p.Resolve(ctx, bob, "refund@2") // not published
	wantCode(t, err, programs.CodeNotFound)
	// Bob's own program of the same name shadows the published one.
	save(t, p, bob, "refund", "bob's", "return 'bob'")
	if v, _ := p.Resolve(ctx, bob, "refund"); v.Owner != "bob" {
		t.Fatalf("bob resolves %s's", v.Owner)
	}
	// To everyone, then withdrawn.
	if err := p.Publish(ctx, admin("root"), "alice", "refund", 2, []string{programs.Everyone}); err != nil {
		t.Fatal(err)
	}
	if got := names(t, p, carol); !slices.Equal(got, []string{"refund@2"}) {
		t.Fatalf("carol lists %v", got)
	}
	if err := p.Publish(ctx, admin("root"), "alice", "refund", 0, nil); err != nil {
		t.Fatal(err)
	}
	if got := names(t, p, carol); len(got) != 0 {
		t.Fatalf("withdrawn, carol still lists %v", got)
	}
	// Another principal cannot read alice's versions; an admin can.
	_, _, err = p.Versions(ctx, bob, "alice", "refund")
	wantCode(t, err, programs.CodeNotFound)
	if _, vs, err := p.Versions(ctx, admin("root"), "alice", "refund"); err != nil || len(vs) != 2 {
		t.Fatalf("admin reads %d versions, %v", len(vs), err)
	}
}

func TestSaveRefusals(t *testing.T) {
	ctx := context.Background()
	p := programs.New(programs.Options{Store: kv.NewMemory(), Vet: planOf{}})
	for _, in := range []programs.SaveInput{
		{Name: "Bad-Name", Description: "d", Code: "return 1"},
		{Name: "a__b", Description: "d", Code: "return 1"},
		{Name: "ok", Description: " ", Code: "return 1"},
		{Name: "ok", Description: "d", Code: ""},
		{Name: "ok", Description: "d", Code: "return 1", Params: json.RawMessage(`{"type":"string"}`)},
		{Name: "ok", Description: "d", Code: "return 1", Params: json.RawMessage(`"city: string"`)},
		{Name: strings.Repeat("a", 49), Description: "d", Code: "return 1"},
	} {
		_, err := p.Save(ctx, caller("alice"), in)
		wantCode(t, err, programs.CodeInvalid)
	}
	refused := v8sandbox.Errorf("PLAN_DENIED", "line 1 calls x.y, which the configuration denies")
	q := programs.New(programs.Options{Store: kv.NewMemory(), Vet: refuse{refused}})
	_, err := q.Save(ctx, caller("alice"), programs.SaveInput{Name: "x", Description: "d", Code: "return await x.y()"})
	wantCode(t, err, "PLAN_DENIED")
	if got := names(t, q, caller("alice")); len(got) != 0 {
		t.Fatalf("a refused program was kept: %v", got)
	}
}

type refuse struct{ err error }

func (r refuse) Vet(context.Context, string, string) (*programs.Vetting, error) { return nil, r.err }

func TestParameters(t *testing.T) {
	cases := []struct{ params, code, want string }{
		{``, `const { city, days = 3 } = args; return args.units + args["mode"]`,
			`{"type":"object","properties":{"city":{"description":"read by the program as args.<name>; its type is not declared"},"days":{"description":"read by the program as args.<name>; its type is not declared"},"mode":{"description":"read by the program as args.<name>; its type is not declared"},"units":{"description":"read by the program as args.<name>; its type is not declared"}}}`},
		{`"{ city: string; days?: number; tags: string[]; unit: 'c' | 'f' }"`, `return 1`,
			`{"type":"object","required":["city","tags","unit"],"properties":{"city":{"type":"string"},"days":{"type":"number"},"tags":{"type":"array","items":{"type":"string"}},"unit":{"enum":["c","f"]}}}`},
		{`"(args: { id: number }) => Promise<string>"`, `return 1`,
			`{"type":"object","required":["id"],"properties":{"id":{"type":"number"}}}`},
		{`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, `return 1`,
			`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`},
	}
	for _, c := range cases {
		got, _, err := programs.Parameters(json.RawMessage(c.params), c.code)
		if err != nil {
			t.Fatalf("%s: %v", c.params, err)
		}
		var a, b any
		json.Unmarshal(got, &a)
		json.Unmarshal([]byte(c.want), &b)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s:\n got %s\nwant %s", c.params, got, c.want)
		}
	}
}

// TestReplicasShareOnRedis: saved on replica A, listed, resolved and
// published through replica B at once (its index follows the store's
// generation); concurrent saves on both number versions without a gap or
// a duplicate.
func TestReplicasShareOnRedis(t *testing.T) {
	if redisServer == nil {
		t.Skip(redisSkip)
	}
	ctx := context.Background()
	prefix := fmt.Sprintf("{programs-test-%d}:", time.Now().UnixNano())
	replica := func() *programs.Programs {
		s, err := kv.NewRedis(kv.RedisOptions{URL: redisServer.URL(), Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return programs.New(programs.Options{Store: s, Vet: planOf{}})
	}
	a, b := replica(), replica()
	alice := caller("alice")
	if got := names(t, b, alice); len(got) != 0 { // b's index is built, empty
		t.Fatal(got)
	}
	save(t, a, alice, "sync", "d", "return 1")
	if got := names(t, b, alice); !slices.Equal(got, []string{"sync@1"}) {
		t.Fatalf("replica B lists %v after a save on A", got)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			r := []*programs.Programs{a, b}[i%2]
			_, err := r.Save(ctx, alice, programs.SaveInput{Name: "sync", Description: fmt.Sprint(i), Code: "return 1"})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	head, versions, err := b.Versions(ctx, alice, "", "sync")
	if err != nil || head.Latest != 21 || len(versions) != 21 {
		t.Fatalf("after 20 concurrent saves: latest %d, %d versions, %v", head.Latest, len(versions), err)
	}
	for i, v := range versions {
		if v.Version != i+1 {
			t.Fatalf("version %d at %d", v.Version, i)
		}
	}
}

// TestKeptAcrossRestart: a bbolt store closed and opened again (a gateway
// restart) still has the programs, versions and publications.
func TestKeptAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := kv.OpenBolt(kv.BoltOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	p := programs.New(programs.Options{Store: s, Vet: planOf{}})
	save(t, p, caller("alice"), "keep", "d1", "return 1")
	save(t, p, caller("alice"), "keep", "d2", "return 2")
	if err := p.Publish(ctx, admin("root"), "alice", "keep", 1, []string{"bob"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := kv.OpenBolt(kv.BoltOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	p2 := programs.New(programs.Options{Store: s2, Vet: planOf{}})
	if got := names(t, p2, caller("alice")); !slices.Equal(got, []string{"keep@2"}) {
		t.Fatalf("after restart alice lists %v", got)
	}
	if v, err := p2.Resolve(ctx, caller("bob"), "keep"); err != nil || v.Code != "return 1" {
		t.Fatalf("after restart bob resolves %+v, %v", v, err)
	}
}

// TestStoreDownFailsClosed: with the store gone, saving, listing and
// resolving fail with STORE_UNAVAILABLE, never as "no programs".
func TestStoreDownFailsClosed(t *testing.T) {
	srv := redistest.ForTest(t)
	s, err := kv.NewRedis(kv.RedisOptions{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := programs.New(programs.Options{Store: s, Vet: planOf{}})
	alice := caller("alice")
	save(t, p, alice, "x", "d", "return 1")
	srv.Kill()
	ctx := context.Background()
	_, err = p.List(ctx, alice)
	wantCode(t, err, programs.CodeStoreUnavailable)
	_, err = p.Resolve(ctx, alice, "x")
	wantCode(t, err, programs.CodeStoreUnavailable)
	_, err = p.Save(ctx, alice, programs.SaveInput{Name: "y", Description: "d", Code: "return 1"})
	wantCode(t, err, programs.CodeStoreUnavailable)
}

// BenchmarkList1000 and BenchmarkResolve1000: a principal's 1 000 saved
// programs (beside 1 000 of others) listed, and one resolved by name, on
// the embedded store (issue 45's goal: under 1 ms each).
func BenchmarkList1000(b *testing.B) {
	p, alice := thousand(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		l, err := p.List(ctx, alice)
		if err != nil || len(l) != 1000 {
			b.Fatal(len(l), err)
		}
	}
}

func BenchmarkResolve1000(b *testing.B) {
	p, alice := thousand(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		v, err := p.Resolve(ctx, alice, "program_0500")
		if err != nil || v.Version != 1 {
			b.Fatal(err)
		}
	}
}

func thousand(b *testing.B) (*programs.Programs, programs.Caller) {
	s, err := kv.OpenBolt(kv.BoltOptions{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	p := programs.New(programs.Options{Store: s, Vet: planOf{}})
	for _, who := range []string{"alice", "bob"} {
		for i := range 1000 {
			save(b, p, caller(who), fmt.Sprintf("program_%04d", i), "a saved program of the benchmark", "return await github.list_issues({state: args.state})")
		}
	}
	return p, caller("alice")
}
