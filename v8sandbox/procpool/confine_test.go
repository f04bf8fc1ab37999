package procpool

import (
	"strings"
	"testing"

	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/sandboxtest"
)

// TestTimeZoneLookupUnderSeccomp: formatting a date makes ICU look for the
// host's time zone (openat, then readlink of /etc/localtime). Both are path
// calls the filter refuses before any lookup; in a test binary a call
// outside the list kills the worker, so this fails loudly if ICU's lookup
// is not answered EPERM (it was: SANDBOX_CRASHED, "bad system call"),
// including in isolates created after the filter (RecycleAfter).
func TestTimeZoneLookupUnderSeccomp(t *testing.T) {
	mode := ConfinementStrict
	if hostLacks() != "" {
		mode = ConfinementBestEffort
	}
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1, RecycleAfter: 2, Confinement: mode})
	for i := 0; i < 4; i++ {
		got := sandboxtest.Value(t, p, v8sandbox.Job{Source: "new Date(0).toLocaleString('de-DE')"}, nil)
		if !strings.Contains(got, "1970") {
			t.Fatalf("run %d: %s, want a date in 1970", i, got)
		}
	}
}
