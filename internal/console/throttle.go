package console

import (
	"math"
	"net"
	"sync"
	"time"
)

// Sign-in throttle: failed sign-ins counted per client address and
// overall in fixed windows; past a limit every sign-in (a correct token
// included, so that the answer tells nothing) is refused until the window
// ends.
const (
	// signinWindow is how long failed sign-ins are counted.
	signinWindow = time.Minute
	// signinFailuresPerAddr is how many failed sign-ins one client address
	// (an IPv6 /64) gets per signinWindow.
	signinFailuresPerAddr = 10
	// signinFailuresOverall is how many failed sign-ins all addresses
	// together get per signinWindow.
	signinFailuresOverall = 100
)

// window counts failures from start on.
type window struct {
	start    time.Time
	failures int
}

// signinThrottle counts failed sign-ins. Its address table holds only
// addresses with a failure in a window still open, at most
// signinFailuresOverall of them per window.
type signinThrottle struct {
	now     func() time.Time
	mu      sync.Mutex
	overall window
	perAddr map[string]*window
}

func newSigninThrottle(now func() time.Time) *signinThrottle {
	if now == nil {
		now = time.Now
	}
	return &signinThrottle{now: now, perAddr: map[string]*window{}}
}

// wait is how long a sign-in from remote (an http.Request's RemoteAddr)
// must wait: 0 when it may try now.
func (s *signinThrottle) wait(remote string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var wait time.Duration
	if s.overall.failures >= signinFailuresOverall {
		wait = s.overall.start.Add(signinWindow).Sub(now)
	}
	if w := s.perAddr[addrKey(remote)]; w != nil && w.failures >= signinFailuresPerAddr {
		wait = max(wait, w.start.Add(signinWindow).Sub(now))
	}
	return max(wait, 0)
}

// fail counts a failed sign-in from remote.
func (s *signinThrottle) fail(remote string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.overall.count(now)
	for k, w := range s.perAddr {
		if !now.Before(w.start.Add(signinWindow)) {
			delete(s.perAddr, k)
		}
	}
	key := addrKey(remote)
	w := s.perAddr[key]
	if w == nil {
		w = &window{start: now}
		s.perAddr[key] = w
	}
	w.count(now)
}

// count adds a failure at now, opening a new window when the last one
// ended.
func (w *window) count(now time.Time) {
	if !now.Before(w.start.Add(signinWindow)) {
		w.start, w.failures = now, 0
	}
	w.failures++
}

// retryAfter is d in whole seconds, rounded up, at least 1.
func retryAfter(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

// addrKey is the client address r.RemoteAddr names: its IP, or for IPv6
// its /64 (one host usually holds a whole /64).
func addrKey(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return ip.String()
}
