// Package console is the operator's web console at /console on the HTTP
// listener (server.console): backends, tools, runs, approvals, audit and
// metrics, for the principals of server.console.admins.
//
// It is built with html/template and embed only: no CDN, no build step,
// a strict Content-Security-Policy (scripts come from /console/static,
// never inline), a CSRF token on every form, and server-sent events for
// live updates. A browser signs in once with its bearer token and keeps a
// server-side session (an HttpOnly, SameSite=Strict cookie, Secure over
// TLS); a request carrying an admin's bearer token is served as well.
package console
