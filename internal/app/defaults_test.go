package app

import (
	"testing"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/codemode/output"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/v8sandbox"
)

// TestLibraryDefaultsAreConfigs pins the library packages' own defaults
// (what they use when a caller leaves an option zero) to config.Default(),
// the one table of product defaults: a program embedding a library gets
// what the gateway's configuration documents.
func TestLibraryDefaultsAreConfigs(t *testing.T) {
	d := config.Default()
	for _, c := range []struct {
		name          string
		library, conf any
	}{
		{"sandbox.timeout", v8sandbox.DefaultTimeout, d.Sandbox.Timeout},
		{"sandbox.max_heap_mb", v8sandbox.DefaultHeapMB, d.Sandbox.MaxHeapMB},
		{"sandbox.max_concurrent", v8sandbox.DefaultWorkers, d.Sandbox.MaxConcurrent},
		{"sandbox.max_output_size", output.DefaultMaxOutputSize, d.Sandbox.MaxOutputSize},
		{"sandbox.backend_wait", backend.DefaultStartWait, d.Sandbox.BackendWait},
		{"sandbox.output.intent_min_bytes", output.DefaultIntentMinBytes, d.Sandbox.Output.IntentMinBytes},
		{"sandbox.output.chunk_threshold", output.DefaultChunkThreshold, d.Sandbox.Output.ChunkThreshold},
		{"sandbox.output.result_ttl", resultstore.DefaultTTL, d.Sandbox.Output.ResultTTL},
		{"sandbox.output.result_store_bytes", int64(resultstore.DefaultMaxBytes), d.Sandbox.Output.ResultStoreBytes},
		{"backends.<name>.timeout", backend.DefaultTimeout, config.DefaultBackendTimeout},
		{"backends.<name>.max_concurrent_calls", backend.DefaultMaxConcurrentCalls, config.DefaultMaxConcurrentCalls},
		{"backends.<name>.max_sessions", backend.DefaultMaxSessions, config.DefaultBackendMaxSessions},
	} {
		if c.library != c.conf {
			t.Errorf("%s: the library's default is %v, config's %v", c.name, c.library, c.conf)
		}
	}
	o := OutputOptions(d.Sandbox)
	o.ChunkPreviewItems = output.DefaultChunkPreviewItems // not configurable
	if o != output.DefaultOptions() {
		t.Errorf("sandbox.output maps to %+v, output's defaults are %+v", o, output.DefaultOptions())
	}
}
