package v8sandbox

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	v8 "rogchap.com/v8go"
)

// BenchmarkHostValueParse parses a 1 MB tool value (an envelope around
// JSON records, ASCII or with non-ASCII text) in a fresh context of a
// warm isolate, as a host call's reply reaches a script: "v8go" through
// v8go.JSONParse from a Go string (copied to C memory, then into V8),
// "terminated" through parseTerminated from the NUL-terminated envelope
// (V8 reads the Go bytes). Making and closing the context is not timed.
// cpu-ms is the median CPU time of the parsing thread (steadier than wall
// time on a shared machine; V8's background GC threads are not in it).
//
//	go test -run '^$' -bench HostValueParse -benchtime 30x ./v8sandbox/
func BenchmarkHostValueParse(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	initV8()
	iso := v8.NewIsolate()
	defer iso.Dispose()
	for _, name := range []string{"ascii", "utf8"} {
		var doc strings.Builder
		doc.WriteString(`{"items":[`)
		for i := 0; doc.Len() < 1<<20; i++ {
			if i > 0 {
				doc.WriteByte(',')
			}
			label := "item"
			if name == "utf8" {
				label = "élément ✓"
			}
			fmt.Fprintf(&doc, `{"id":%d,"name":"%s %d","price":%d.5,"tags":["a","b"],"ok":true}`, i, label, i, i)
		}
		doc.WriteString(`]}`)
		value := []byte(doc.String())
		for _, way := range []string{"v8go", "terminated"} {
			b.Run(name+"/"+way, func(b *testing.B) {
				b.SetBytes(int64(len(value)))
				var cpu []time.Duration
				for b.Loop() {
					b.StopTimer()
					ctx := v8.NewContext(iso)
					b.StartTimer()
					c0 := benchThreadCPU()
					var err error
					if way == "v8go" {
						var s strings.Builder // the envelope as run.envelope built it before
						s.Grow(len(value) + 20)
						s.WriteString(`{"ok":true,"value":`)
						s.Write(value)
						s.WriteByte('}')
						_, err = v8.JSONParse(ctx, s.String())
					} else {
						_, err = parseTerminated(ctx, terminatedJSON(valueEnvelope, value, envelopeEnd))
					}
					if err != nil {
						b.Fatal(err)
					}
					cpu = append(cpu, benchThreadCPU()-c0)
					b.StopTimer()
					ctx.Close()
					b.StartTimer()
				}
				slices.Sort(cpu)
				b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds())/1e3, "cpu-ms")
			})
		}
	}
}

// benchThreadCPU is the CPU time the calling OS thread has used.
func benchThreadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}
