package typecheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/fairshare"
	"github.com/isogate/isogate/internal/testutil"
)

// What a checked program can make the checker spend (issue 42): memory, in
// a checker with a small heap cap so that it is reached quickly, and the
// queue of a principal's checks.

// A program whose check exceeds the heap cap (a giant array literal) is
// refused with ErrTooComplex; its lane's isolate is rebuilt, and the next
// principal's check is served.
func TestHeapBombIsTooComplex(t *testing.T) {
	c := New(Options{Timeout: 60e9, HeapMB: 40})
	defer c.Close()
	ctx := context.Background()
	bomb := "const a = [" + strings.Repeat("{a:0,b:'x'},", 40000) + "];"
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
	c := New(Options{Timeout: 60e9, HeapMB: 40})
	defer c.Close()
	ctx := context.Background()
	var b strings.Builder
	for i := range 700 {
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

// A principal holding its lane may have MaxQueued checks waiting; one more
// fails at once with ErrUnavailable (the queue full), while another
// principal's check is served on the other lane.
func TestQueueFullIsUnavailable(t *testing.T) {
	c := New(Options{Timeout: 60e9})
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // ends bob's bomb and his waiting checks
	bomb := "type R<N extends any[]> = N['length'] extends 5000 ? N : R<[...N, 1]>;\nconst x: R<[]> = null as any;"
	for range 1 + MaxQueued {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.Submit(ctx, Request{Decls: counterDecls, Program: bomb, Principal: "bob"})
		}()
	}
	testutil.Eventually(t, time.Minute, func() bool {
		held, waiting := c.share.InUse()
		return held == 1 && waiting == MaxQueued
	}, "bob's bomb on a lane and %d more waiting", MaxQueued)
	// The deadline bounds a failure (a check that waits), it is not
	// awaited: a refusal comes at once.
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := c.Submit(wctx, Request{Decls: counterDecls, Program: bomb, Principal: "bob"})
	wcancel()
	var share *fairshare.ShareError
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrUnchecked) || !errors.As(err, &share) || share.Cause != nil {
		t.Fatalf("bob's check past his queue: %v; want ErrUnavailable at once (his queue full)", err)
	}
	rep, err := c.Submit(ctx, Request{Decls: counterDecls, Program: "await counter.bump({ident: 'a'})", Principal: "alice"})
	if err != nil || len(rep.Certain()) != 1 {
		t.Fatalf("alice's check meanwhile: %v %+v; want her one certain mistake", err, rep)
	}
}
