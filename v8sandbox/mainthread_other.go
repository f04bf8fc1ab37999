//go:build !linux

package v8sandbox

// onMainThread reports false where the main thread cannot be told cheaply;
// runs then stay on the caller's goroutine.
func onMainThread() bool { return false }
