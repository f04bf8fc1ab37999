// Package testutil holds helpers shared by the module's tests.
package testutil

import (
	"testing"
	"time"
)

// maxPause caps the pause between two checks of [Eventually].
const maxPause = 50 * time.Millisecond

// Eventually waits for a condition that nothing signals: a process that
// dies or is reaped, a server that expires a key, a state reached by code
// that offers no notification. It checks cond at once, then again after
// pauses growing from 1 ms to 50 ms, and fails the test with
// "gave up after TIMEOUT waiting for MSG" (msgf formatted with args) when
// cond is still false after timeout.
//
// Prefer waiting for the event itself whenever there is one: a channel
// closed or a callback called by the code under test, a WaitReady or
// WaitHealthy method, a line a child process prints. Eventually is the
// fallback for conditions with no event to wait on, never a way to let
// time pass so that something else happens first.
//
// timeout bounds a hang; it is not an expectation. Choose it generous
// (seconds) so a slow or loaded machine makes the test slower, never
// failing.
//
// Like t.Fatalf, it must be called from the goroutine running the test.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, msgf string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, maxPause) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting for "+msgf, append([]any{timeout}, args...)...)
			return
		}
		time.Sleep(pause) // a polling interval: cond is the synchronisation
	}
}
