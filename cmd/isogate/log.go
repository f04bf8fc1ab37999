package main

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/lmittmann/tint"

	"github.com/isogate/isogate/config"
)

// discardLogger is for commands whose stderr is a machine-read contract.
func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newLogger logs to w (stderr: stdout is the MCP stream in stdio mode) as
// coloured text (tint) or JSON, at the configured level.
func newLogger(cfg config.ServerConfig, w io.Writer) *slog.Logger {
	level := cfg.SlogLevel()
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
	}
	noColor := true
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			noColor = false
		}
	}
	return slog.New(tint.NewHandler(w, &tint.Options{Level: level, TimeFormat: time.TimeOnly, NoColor: noColor}))
}
