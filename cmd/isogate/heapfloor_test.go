package main

import "testing"

// TestRaiseHeapFloor checks the ballast is set by default and left out when
// the operator tuned the collector.
func TestRaiseHeapFloor(t *testing.T) {
	defer func() { ballast = nil }()
	for _, tc := range []struct {
		env, value string
		want       int
	}{
		{"GOGC", "", heapFloor},
		{"GOGC", "200", 0},
		{"GOMEMLIMIT", "1GiB", 0},
	} {
		ballast = nil
		t.Setenv("GOGC", "")
		t.Setenv("GOMEMLIMIT", "")
		t.Setenv(tc.env, tc.value)
		raiseHeapFloor()
		if len(ballast) != tc.want {
			t.Errorf("%s=%q: ballast of %d bytes, want %d", tc.env, tc.value, len(ballast), tc.want)
		}
	}
}
