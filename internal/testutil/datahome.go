package testutil

import (
	"fmt"
	"os"
)

// DataHome gives this test process, and every process it starts, an
// $XDG_DATA_HOME of its own (a new temporary directory, returned), so the
// default store.data_dir of the gateways its tests start is never the
// developer's ~/.local/share/isogate: saved programs there would be listed
// by those gateways, and a gateway of the developer's holding that file
// would make their saved-program calls fail. Call it from TestMain before
// m.Run and remove the directory after.
func DataHome() (string, error) {
	dir, err := os.MkdirTemp("", "isogate-test-data")
	if err != nil {
		return "", fmt.Errorf("a data home for the tests: %w", err)
	}
	if err := os.Setenv("XDG_DATA_HOME", dir); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("a data home for the tests: %w", err)
	}
	return dir, nil
}
