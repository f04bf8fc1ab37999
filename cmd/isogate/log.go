package main

import (
	"io"
	"log/slog"
)

// discardLogger is for commands whose stderr is a machine-read contract.
func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
