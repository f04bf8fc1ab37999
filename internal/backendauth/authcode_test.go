package backendauth

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRedirectPageReachesTheBrowser: the page that tells the user the
// login went through is delivered whole before awaitCode returns and
// its server closes. The handler hands the code over while the page is
// still being written, so a server closed at once would cut the browser
// off (EOF) on some of these rounds.
func TestRedirectPageReachesTheBrowser(t *testing.T) {
	for i := range 200 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		type page struct {
			body string
			err  error
		}
		got := make(chan page, 1)
		go func() {
			resp, err := http.Get("http://" + ln.Addr().String() + "/callback?state=s&code=c&iss=i")
			if err != nil {
				got <- page{err: err}
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			got <- page{string(b), err}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		code, iss, err := awaitCode(ctx, ln, "s")
		cancel()
		ln.Close()
		if err != nil || code != "c" || iss != "i" {
			t.Fatalf("round %d: awaitCode = %q, %q, %v", i, code, iss, err)
		}
		p := <-got
		if p.err != nil || !strings.Contains(p.body, "isogate is authorized") {
			t.Fatalf("round %d: the browser got %q, %v", i, p.body, p.err)
		}
	}
}
