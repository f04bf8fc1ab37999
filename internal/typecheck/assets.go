package typecheck

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// The TypeScript compiler's JavaScript build and the ES2022 libraries, as
// assets/update.sh produced them from npm `typescript` (see
// assets/README.md: version, sha256, licence).
var (
	//go:embed assets/typescript.js.zst
	compilerZst []byte
	//go:embed assets/libs.tar.gz
	libsGz []byte
	//go:embed checker.js
	checkerJS string
)

// CompilerVersion is the version of the embedded TypeScript compiler.
const CompilerVersion = "6.0.3"

// compilerScript is typescript.js wrapped so that it defines globalThis.ts:
// it is a CommonJS module that looks for `module`.
func compilerScript() (string, error) {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return "", fmt.Errorf("typecheck: reading the compiler: %w", err)
	}
	defer d.Close()
	src, err := d.DecodeAll(compilerZst, nil)
	if err != nil {
		return "", fmt.Errorf("typecheck: reading the compiler: %w", err)
	}
	var b strings.Builder
	b.Grow(len(src) + len(compilerWrapStart) + len(compilerWrapEnd))
	b.WriteString(compilerWrapStart)
	b.Write(src)
	b.WriteString(compilerWrapEnd)
	return b.String(), nil
}

// What compilerScript puts around typescript.js.
const (
	compilerWrapStart = "(function(){var module={exports:{}};var exports=module.exports;\n"
	compilerWrapEnd   = "\n;globalThis.ts=module.exports;})();"
)

// libsScript defines globalThis.__isogate_tc_libs, the library files by
// name, for checker.js.
func libsScript() (string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(libsGz))
	if err != nil {
		return "", fmt.Errorf("typecheck: reading the libraries: %w", err)
	}
	libs := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("typecheck: reading the libraries: %w", err)
		}
		text, err := io.ReadAll(tr)
		if err != nil {
			return "", fmt.Errorf("typecheck: reading %s: %w", h.Name, err)
		}
		libs[h.Name] = string(text)
	}
	js, err := json.Marshal(libs)
	if err != nil {
		return "", fmt.Errorf("typecheck: encoding the libraries: %w", err)
	}
	return "globalThis.__isogate_tc_libs = " + string(js) + ";", nil
}
