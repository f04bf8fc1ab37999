package typecheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Memory a checked program can make the checker allocate (issue 42), in a
// checker with a small heap cap so that it is reached quickly.

// A program whose check exceeds the heap cap (a giant array literal) is
// refused with ErrTooComplex; its lane's isolate is rebuilt, and the next
// principal's check is served.
func TestHeapBombIsTooComplex(t *testing.T) {
	c := New(Options{Timeout: 60e9, HeapMB: 64})
	defer c.Close()
	ctx := context.Background()
	bomb := "const a = [" + strings.Repeat("{a:0,b:'x'},", 80000) + "];"
	_, err := c.Submit(ctx, Request{Decls: counterDecls, Program: bomb, Principal: "bob"})
	if !errors.Is(err, ErrTooComplex) || !errors.Is(err, ErrUnchecked) {
		t.Fatalf("bob's giant literal: %v; want ErrTooComplex", err)
	}
	rep, err := c.Submit(ctx, Request{Decls: counterDecls, Program: "await counter.bump({ident: 'a'})", Principal: "alice"})
	if err != nil || len(rep.Certain()) != 1 {
		t.Fatalf("alice's check after: %v %+v; want her one certain mistake", err, rep)
	}
}

// A clean program is checked in the shared base of its declarations, whose
// checker keeps its nodes and types until the base is rebuilt (25 checks):
// a principal sending large clean programs filled the heap for everyone's
// next checks, until one of them (anyone's) hit the heap cap. A base is
// now dropped once a check leaves the heap past half the cap: every one of
// these checks, each well within the cap alone, is served.
func TestCheckedProgramsDoNotAccumulate(t *testing.T) {
	c := New(Options{Timeout: 60e9, HeapMB: 64})
	defer c.Close()
	ctx := context.Background()
	var b strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&b, "const a%d = {x%d: %d, s: 'v%d'};\n", i, i, i, i)
	}
	big := b.String()
	for i := range 12 {
		rep, err := c.Submit(ctx, Request{Decls: counterDecls, Program: big, Principal: "bob"})
		if err != nil || len(rep.Diagnostics) != 0 {
			t.Fatalf("bob's check %d: %v %+v", i, err, rep)
		}
		rep, err = c.Submit(ctx, Request{Decls: counterDecls, Program: "await counter.bump({ident: 'a'})", Principal: "alice"})
		if err != nil || len(rep.Certain()) != 1 {
			t.Fatalf("alice's check %d (after bob's): %v %+v; want her one certain mistake", i, err, rep)
		}
	}
}
