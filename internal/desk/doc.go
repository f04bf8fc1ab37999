// Package desk is what the operator's console reads and acts on, kept in
// memory by the gateway while it runs: the programs running now (with a
// way to cancel each), the approvals waiting for a person (with a way to
// answer each, beside the agent's own client), the latest run records and
// the latest audit events.
//
// The surface writes to a [Desk] (a nil *Desk is valid and records
// nothing); internal/console reads it. Everything is bounded: the oldest
// records and events make room for new ones.
package desk
