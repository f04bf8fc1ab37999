// Package tasks holds the gateway's tasks and durable runs: the task
// state machine behind tasks/get, tasks/result and tasks/cancel, the
// leases that let another replica take a task over when its replica
// dies, and the journals of durable runs that a replica resumes by replay.
package tasks
