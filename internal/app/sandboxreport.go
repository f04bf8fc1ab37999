package app

import (
	"strings"

	v8 "rogchap.com/v8go"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/metrics"
	"github.com/isogate/isogate/internal/surface"
	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// sandboxReport describes runner for /readyz, isogate://stats and isogate
// doctor: the isolation, the V8 version and, in process isolation, the
// confinement its workers obtained (known once a worker has started).
func sandboxReport(runner v8sandbox.Runner) surface.SandboxReport {
	r := surface.SandboxReport{Isolation: string(config.IsolationThread), V8Version: strings.TrimSpace(v8.Version())}
	if p, ok := runner.(*procpool.Pool); ok {
		r.Isolation = string(config.IsolationProcess)
		if c := p.Confinement(); c.Mode != "" {
			r.Confinement = &c
		}
	}
	return r
}

// confinementLevels are the metrics' view of the confinement obtained.
func confinementLevels(runner v8sandbox.Runner) []metrics.LayerLevel {
	p, ok := runner.(*procpool.Pool)
	if !ok {
		return nil
	}
	var out []metrics.LayerLevel
	for _, l := range p.Confinement().Layers {
		out = append(out, metrics.LayerLevel{Layer: l.Name, Level: l.Level})
	}
	return out
}

// Sandbox reports how the gateway's programs are isolated and, with
// sandbox.typecheck on, the type checker's state.
func (a *App) Sandbox() surface.SandboxReport {
	r := sandboxReport(a.Runner)
	r.Typecheck = a.typecheckReport()
	return r
}
