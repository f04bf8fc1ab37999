//go:build !linux

package surface

import (
	"errors"
	"os"
)

// pollableStdin is Linux's only (stdio_linux.go): elsewhere stdin is read
// by the go-sdk's own stdio transport.
func pollableStdin() (*os.File, error) {
	return nil, errors.New("a pollable stdin is only set up on Linux")
}
