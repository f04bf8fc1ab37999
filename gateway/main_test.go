package gateway

import (
	"os"
	"testing"

	"github.com/isogate/isogate/internal/testutil/fakeembed"
	"github.com/isogate/isogate/v8sandbox/procpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain lets this test binary serve as the sandbox worker of process
// isolation, as BenchmarkPassthrough's stdio echo backend, as
// TestBackendStderrOnlyForAdmins's stdio backend and as the fake embeddings
// endpoint of TestSearchEmbeddingsSharedByReplicas.
func TestMain(m *testing.M) {
	procpool.RunWorkerIfRequested()
	runEchoBackendIfRequested()
	runStderrBackendIfRequested()
	fakeembed.RunIfRequested()
	// Saved programs go to store.data_dir, by default under
	// $XDG_DATA_HOME: never the developer's own.
	dataHome, err := os.MkdirTemp("", "isogate-gateway-test-data")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_DATA_HOME", dataHome)
	code := m.Run()
	os.RemoveAll(dataHome)
	os.Exit(code)
}

// textResult is a tool result with one text content.
func textResult(text string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
}
