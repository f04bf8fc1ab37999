//go:build !unix

package typecheck

import "io/fs"

// ownedByMe is true where file owners are not checked (the file's mode
// still is).
func ownedByMe(fs.FileInfo) bool { return true }
