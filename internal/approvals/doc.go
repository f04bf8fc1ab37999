// Package approvals keeps what waits for a client's answer between rounds
// of a 2026-07-28 client (SEP-2322): call_tool_chain runs paused for their
// approvals or for a backend's input requests (approvals.go), their
// journals when runs are durable, so that another replica resumes them by
// replay (durable.go), and the approval round of a passthrough call with
// the backends' own requestStates (inputrequests.go). It serves a
// [Host], the surface, through [Rounds].
package approvals
