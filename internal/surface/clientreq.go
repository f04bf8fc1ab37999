package surface

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/backend"
)

// ClientRequests returns what routes backends' requests to clients (give
// it to backend.Options.ClientRequests).
func (sf *Surface) ClientRequests() backend.ClientRequests { return sf.forward.Requests(nil) }

// BackendProgress forwards a backend's notifications/progress to the
// client whose passthrough call it is about.
func (sf *Surface) BackendProgress(name string, p *mcp.ProgressNotificationParams) {
	sf.forward.Progress(name, p)
}

// BackendLog forwards a backend's notifications/message to the clients
// (see clientreq.Forwarder.Log).
func (sf *Surface) BackendLog(name string, p *mcp.LoggingMessageParams) {
	sf.forward.Log(name, p)
}
