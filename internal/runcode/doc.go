// Package runcode implements the run_code MCP tool: a plain, bounded
// JavaScript runner for small computations, on a [v8sandbox.Runner].
//
// Code runs as the body of an async function in a fresh V8 context, after a
// trusted prelude (prelude.js and console.js, in the scope of
// internal/jsvalue's kit of captured built-ins) that installs console and
// the runner that catches errors and sanitizes the result into plain JSON
// with the kit's sanitizer. Every run is bounded: code length, a clamped timeout, a 16 MB
// heap, V8's stack guard, 100 console lines and a 1 MB result.
//
// Host APIs are offered as api.<name>(...) functions ([API]): async Go
// handlers with a JSON schema for their arguments and metadata (signature,
// description, return type) that the tool description and
// environment.apis list. Two are built in, each off until configured:
// api.fetch ([FetchAPI]: allowlisted hosts, private addresses refused when
// dialing) and api.getWeather ([WeatherAPI]: Open-Meteo).
//
// Use:
//
//	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 2})
//	rc, err := runcode.New(runcode.Options{Runner: pool, Config: cfg.RunCode})
//	…
//	rc.AddTo(server) // adds the run_code tool
package runcode
