package console

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/desk"
	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/internal/programs"
)

type acceptAll struct{}

func (acceptAll) Vet(context.Context, string, string) (*programs.Vetting, error) {
	return &programs.Vetting{Calls: []string{}}, nil
}

// TestProgramActionsNeedAProgramAdmin: a console operator who is not an
// admin of saved programs can neither publish carol's program nor make
// another of its versions current (PROGRAM_FORBIDDEN, nothing changed);
// without the CSRF token nobody can; an admin of saved programs can.
func TestProgramActionsNeedAProgramAdmin(t *testing.T) {
	ctx := context.Background()
	p := programs.New(programs.Options{Store: kv.NewMemory(), Vet: acceptAll{}})
	carol := programs.Caller{Principal: &authn.Principal{Name: "carol"}}
	for _, code := range []string{"return 1", "return 2"} {
		if _, err := p.Save(ctx, carol, programs.SaveInput{Name: "tally", Description: "d", Code: code}); err != nil {
			t.Fatal(err)
		}
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*authn.Principal, error) {
		switch token {
		case "operator-token":
			return &authn.Principal{Name: "alice", Scopes: []string{"isogate.admin"}}, nil
		case "root-token":
			return &authn.Principal{Name: "root", Scopes: []string{"isogate.admin"}}, nil
		}
		return nil, errors.New("invalid token")
	}
	c := New(Sources{Desk: desk.New(), Programs: p, ProgramAdmin: func(name string) bool { return name == "root" }},
		Options{Admins: []string{"scope:isogate.admin"}, Verify: verify})
	head := func() *programs.Head {
		t.Helper()
		h, _, err := p.Versions(ctx, programs.Caller{Admin: true}, "carol", "tally")
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	post := func(ck *http.Cookie, path string, form url.Values) (int, string) {
		t.Helper()
		res := do(t, c, "POST", path, form, http.Header{"Cookie": {ck.String()}})
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	publish := url.Values{"owner": {"carol"}, "name": {"tally"}, "version": {"1"}, "to": {"*"}}
	current := url.Values{"owner": {"carol"}, "name": {"tally"}, "version": {"1"}}

	ck, csrf := signIn(t, c, "operator-token")
	for path, form := range map[string]url.Values{"/console/programs/publish": publish, "/console/programs/current": current} {
		if status, _ := post(ck, path, form); status != http.StatusForbidden {
			t.Errorf("%s without the CSRF token: %d", path, status)
		}
		form = cloneWith(form, "csrf", csrf)
		if status, body := post(ck, path, form); status != http.StatusUnprocessableEntity || !strings.Contains(body, "PROGRAM_FORBIDDEN") {
			t.Errorf("%s by an operator who is not a program admin: %d", path, status)
		}
	}
	if h := head(); h.Published != nil || h.Current != 2 {
		t.Fatalf("changed by a refused operator: published %v, current %d", h.Published, h.Current)
	}

	ck, csrf = signIn(t, c, "root-token")
	for path, form := range map[string]url.Values{"/console/programs/publish": publish, "/console/programs/current": current} {
		if status, _ := post(ck, path, cloneWith(form, "csrf", csrf)); status != http.StatusSeeOther {
			t.Errorf("%s by a program admin: %d", path, status)
		}
	}
	if h := head(); h.Published == nil || h.Published.Version != 1 || h.Current != 1 {
		t.Fatalf("a program admin's actions: published %v, current %d", h.Published, h.Current)
	}
}

func cloneWith(v url.Values, key, value string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = vs
	}
	out.Set(key, value)
	return out
}
