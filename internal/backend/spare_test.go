package backend

import (
	"testing"
	"time"

	"github.com/isogate/isogate/internal/testutil"
)

// TestGoSpareKeepsGoroutine checks that the goroutine a call ran in waits
// for the next one (keeping its grown stack) instead of ending.
func TestGoSpareKeepsGoroutine(t *testing.T) {
	done := make(chan struct{})
	goSpare(func() { close(done) })
	<-done
	testutil.Eventually(t, 5*time.Second, func() bool {
		ran := make(chan struct{})
		select {
		case spare <- func() { close(ran) }: // taken by a waiting goroutine
			<-ran
			return true
		default:
			return false
		}
	}, "a spare goroutine waiting for work")
}
