//go:build unix

package typecheck

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByMe reports whether this process's effective user owns fi's file.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
