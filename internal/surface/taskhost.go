package surface

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/tasks"
)

// taskHost is what the tasks (internal/tasks) need of the surface.
func (sf *Surface) taskHost() tasks.Host {
	return tasks.Host{
		Logger:     sf.logger,
		Durables:   &sf.durables,
		Stateless:  sf.opts.Stateless,
		HasSession: sf.sessions.has,
		Owner: func(r *http.Request) string {
			return sf.httpOwner(authn.FromTokenInfo(auth.TokenInfoFromContext(r.Context())))
		},
		TaskSupport:  sf.taskSupport,
		ChainJournal: chainJournal,
		RunTimeout: func(j *codemode.Journal) time.Duration {
			return sf.runTimeout(chainInput{Timeout: j.TimeoutMS})
		},
		RunJournal: func(ctx context.Context, j *codemode.Journal) *mcp.CallToolResult {
			in := chainInput{Code: j.Code, Timeout: j.TimeoutMS, MaxOutputSize: j.MaxOutputSize, Intent: j.Intent}
			args, _ := json.Marshal(in)
			req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "call_tool_chain", Arguments: args}}
			return sf.executeChain(ctx, req, in)
		},
	}
}

// chainJournal is the journal a durable run of call_tool_chain with
// arguments starts; nil when they are not a program.
func chainJournal(arguments any) *codemode.Journal {
	var in chainInput
	if raw, err := json.Marshal(arguments); err != nil || json.Unmarshal(raw, &in) != nil || in.Code == "" {
		return nil
	}
	return codemode.NewJournal(in.Code, in.Timeout, in.MaxOutputSize, in.Intent)
}

// TaskOptions bound the tasks clients create (server.tasks).
type TaskOptions = tasks.Options

// TaskIntents is the number of task intents pending: task requests read
// by the boundary whose call has not started yet (isogate_task_intents).
func (sf *Surface) TaskIntents() int { return sf.tasks.Intents() }

// StopTasks tells the surface's tasks that the gateway is shutting down
// (tasks.Tasks.Stop): a leased task that fails from then on is left to
// another replica.
func (sf *Surface) StopTasks() { sf.tasks.Stop() }

// runOwner is the owner of a run of req: a taken-over run's, or the
// request's.
func (sf *Surface) runOwner(ctx context.Context, req *mcp.CallToolRequest) string {
	if o, ok := tasks.TakenOwner(ctx); ok {
		return o
	}
	return sf.ownerOf(req)
}

// taskSupportOptional is the `execution.taskSupport` isogate lists.
const taskSupportOptional = "optional"

// taskSupport is the execution.taskSupport isogate lists for a tool it
// serves under name ("": none).
func (sf *Surface) taskSupport(name string) string {
	if name == "call_tool_chain" || sf.isProgramTool(name) {
		return taskSupportOptional
	}
	if sf.manager == nil {
		return ""
	}
	if b, t, ok := sf.passthrough.origin(name); ok {
		if s := sf.manager.TaskSupport(b, t); s == "required" || s == "optional" {
			return taskSupportOptional
		}
	}
	return ""
}

// SetTaskHook makes h see each step of the tasks this replica runs: a
// test stops the replica at a chosen step (nil: no hook).
func (sf *Surface) SetTaskHook(h tasks.TaskHook) { sf.tasks.SetTaskHook(h) }
