package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	v8 "rogchap.com/v8go"
)

// Environment describes the machine and the versions measured.
type Environment struct {
	CPU, Memory, OS, LoadAvg string
	Cores                    int
	Go, V8, V8go             string
	Goja, GojaNodejs         string
	Esbuild                  string
}

// DescribeEnvironment reads the machine and version details.
func DescribeEnvironment() Environment {
	e := Environment{
		CPU:     cpuModel(),
		Cores:   runtime.NumCPU(),
		Memory:  memTotal(),
		OS:      runtime.GOOS + "/" + runtime.GOARCH,
		LoadAvg: LoadAvg(),
		Go:      runtime.Version(),
		V8:      v8.Version(),
	}
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.OS += ", Linux " + strings.TrimSpace(string(rel))
	}
	e.V8go = moduleVersion("rogchap.com/v8go")
	e.Goja = moduleVersion("github.com/dop251/goja")
	e.GojaNodejs = moduleVersion("github.com/dop251/goja_nodejs")
	e.Esbuild = moduleVersion("github.com/evanw/esbuild")
	return e
}

// moduleVersion returns the version of a dependency linked into this
// binary, from its build information.
func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, d := range info.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version + " (replaced)"
			}
			return d.Version
		}
	}
	return "unknown"
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func memTotal() string {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "unknown"
	}
	for line := range bytes.Lines(data) {
		if rest, ok := bytes.CutPrefix(line, []byte("MemTotal:")); ok {
			var kb int64
			fmt.Sscan(string(rest), &kb)
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "unknown"
}

// LoadAvg returns the 1/5/15-minute load averages (other work on the
// machine skews absolute numbers).
func LoadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
