package gateway

import (
	"testing"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/v8sandbox"
)

// TestSandboxDefaultsAreTheEngines checks the three sandbox defaults config
// cannot reference without linking V8 into every user of config: they are
// v8sandbox's own, so README's config table and the engine agree.
func TestSandboxDefaultsAreTheEngines(t *testing.T) {
	s := config.Default().Sandbox
	if s.Timeout != v8sandbox.DefaultTimeout || s.MaxHeapMB != v8sandbox.DefaultHeapMB || s.MaxConcurrent != v8sandbox.DefaultWorkers {
		t.Fatalf("config sandbox defaults timeout=%s heap=%d concurrent=%d; v8sandbox's are %s, %d, %d",
			s.Timeout, s.MaxHeapMB, s.MaxConcurrent, v8sandbox.DefaultTimeout, v8sandbox.DefaultHeapMB, v8sandbox.DefaultWorkers)
	}
}
