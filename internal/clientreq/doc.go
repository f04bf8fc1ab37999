// Package clientreq brings what backends send about a client's call to
// that client: their progress and log notifications (forward.go), their
// requests (sampling, elicitation, roots; clientrequests.go), and the
// input requests a backend returns, asked the legacy way of a client
// before 2026-07-28 (answer.go). Nothing goes to a guess: what cannot be
// attributed to one client session stays in the gateway's log or is
// refused.
package clientreq
