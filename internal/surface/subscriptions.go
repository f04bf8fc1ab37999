package surface

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// subscriptions are the client sessions subscribed to each backend
// resource URI. The gateway holds one subscription per URI on the
// backend's shared session, whoever asked: it ends when the last session
// that subscribed unsubscribes or closes, never on the request of a
// session that did not subscribe (another principal's, say).
type subscriptions struct {
	byURI map[string]map[*mcp.ServerSession]bool
	watch func(ss *mcp.ServerSession) // makes ss's end call forgetSession (sessionTracker.watch)
}

// subscribe forwards resources/subscribe to the resource's backend, once
// per URI however many clients subscribe; a session subscribing again to
// a URI changes nothing.
func (a *aggregate) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri, ss := req.Params.URI, req.Session
	a.mu.Lock()
	backend, ok := a.owners[uri]
	l := a.lists[backend]
	first := len(a.subs.byURI[uri]) == 0
	again := a.subs.byURI[uri][ss]
	a.mu.Unlock()
	if !ok {
		if isogateURI(uri) {
			return nil // isogate's own resources: accepted, no updates
		}
		return fmt.Errorf("no backend offers %s", uri)
	}
	if l == nil || !l.subscribe {
		return fmt.Errorf("backend %q does not support resources/subscribe", backend)
	}
	if again {
		return nil
	}
	if first {
		// The shared session: it reports the updates (to every
		// subscriber), and the subscription outlives the request.
		sess, err := a.backends.Session(shared(ctx), backend)
		if err != nil {
			return err
		}
		if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			return fmt.Errorf("subscribing to %s on backend %q: %w", uri, backend, err)
		}
	}
	a.mu.Lock()
	if a.subs.byURI == nil {
		a.subs.byURI = map[string]map[*mcp.ServerSession]bool{}
	}
	if a.subs.byURI[uri] == nil {
		a.subs.byURI[uri] = map[*mcp.ServerSession]bool{}
	}
	a.subs.byURI[uri][ss] = true
	a.mu.Unlock()
	if ss != nil && a.subs.watch != nil {
		a.subs.watch(ss)
	}
	return nil
}

// unsubscribe ends the session's subscription, and forwards
// resources/unsubscribe when it was the last one. A session that did not
// subscribe to the URI changes nothing.
func (a *aggregate) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	if backend, last := a.release(req.Params.URI, req.Session); last {
		return a.unsubscribeBackend(ctx, backend, req.Params.URI)
	}
	return nil
}

// release drops ss's subscription to uri; last reports whether it was the
// last one on a backend's resource.
func (a *aggregate) release(uri string, ss *mcp.ServerSession) (backend string, last bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	sessions := a.subs.byURI[uri]
	if !sessions[ss] {
		return "", false
	}
	delete(sessions, ss)
	if len(sessions) > 0 {
		return "", false
	}
	delete(a.subs.byURI, uri)
	backend, ok := a.owners[uri]
	return backend, ok
}

// forgetSession ends every subscription of a closed session.
func (a *aggregate) forgetSession(ss *mcp.ServerSession) {
	a.mu.Lock()
	var uris []string
	for uri, sessions := range a.subs.byURI {
		if sessions[ss] {
			uris = append(uris, uri)
		}
	}
	a.mu.Unlock()
	for _, uri := range uris {
		if backend, last := a.release(uri, ss); last {
			if err := a.unsubscribeBackend(context.Background(), backend, uri); err != nil {
				a.logger.Debug("resource unsubscribe after the last subscriber left", slog.String("uri", uri), slog.Any("error", err))
			}
		}
	}
}

// unsubscribeBackend forwards resources/unsubscribe of uri to backend.
func (a *aggregate) unsubscribeBackend(ctx context.Context, backend, uri string) error {
	sess, err := a.backends.Session(shared(ctx), backend)
	if err != nil {
		return err
	}
	if err := sess.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		return fmt.Errorf("unsubscribing from %s on backend %q: %w", uri, backend, err)
	}
	return nil
}
