package v8sandbox

import (
	"context"
	"testing"
	"time"
)

func TestStopReasonAndSettle(t *testing.T) {
	live := context.Background()
	cancelled, cancel := context.WithCancel(live)
	cancel()
	expired, cancel2 := context.WithDeadline(live, time.Unix(0, 0))
	defer cancel2()

	if e := StopReason(live, false, time.Second); e != nil {
		t.Fatalf("live context: %v", e)
	}
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		expired bool
		want    Code
	}{
		{"caller cancelled", cancelled, false, CodeCancelled},
		{"caller cancelled after the run's deadline", cancelled, true, CodeCancelled},
		{"caller deadline", expired, false, CodeTimeout},
		{"run deadline", live, true, CodeTimeout},
	} {
		if e := StopReason(tc.ctx, tc.expired, time.Second); e == nil || e.Code != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, e, tc.want)
		}
	}

	stop := Errorf(CodeCancelled, "cancelled")
	for _, tc := range []struct {
		err  *Error
		want Code
	}{
		{nil, CodeCancelled}, // a result that came too late
		{Errorf(CodeEval, "Error: context canceled"), CodeCancelled}, // the script error the stop caused
		{Errorf(CodeTimeout, "x"), CodeCancelled},
		{Errorf(CodeHeapLimit, "x"), CodeHeapLimit},
		{Errorf(CodeOutputLimit, "x"), CodeOutputLimit},
		{Errorf(CodeInternal, "x"), CodeInternal},
		{Errorf(CodeSandboxCrashed, "x"), CodeSandboxCrashed},
	} {
		if got := Settle(tc.err, stop); got == nil || got.Code != tc.want {
			t.Errorf("Settle(%v) = %v, want %s", tc.err, got, tc.want)
		}
	}
	if got := Settle(Errorf(CodeEval, "boom"), nil); got == nil || got.Code != CodeEval {
		t.Errorf("without a stop: %v", got)
	}
	if got := Settle(nil, nil); got != nil {
		t.Errorf("success without a stop: %v", got)
	}
}
