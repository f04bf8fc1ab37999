package embedsearch

import "context"

// WaitSettled is [Semantic.WaitReady] that also returns as soon as the
// latest computation of the vectors has failed, with that failure: whether
// the endpoint answers, without waiting out the backoff before its retry
// (isogate doctor).
func (s *Semantic) WaitSettled(ctx context.Context) error {
	for {
		s.mu.Lock()
		ch, last := s.changed, s.lastErr
		s.mu.Unlock()
		if s.Ready() {
			return nil
		}
		if last != nil {
			return last
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
