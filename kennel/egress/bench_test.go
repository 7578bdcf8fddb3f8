package egress

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkAPIRoute measures what the proxy adds to a model API request on
// loopback: the same small POST to a fake API directly and through an API
// route (placeholder replaced, keep-alive on both legs). It reports the
// p50 and p99 of each and the difference (target: ≤ 5 ms added at p50 and
// p99).
//
//	go test -run '^$' -bench APIRoute -benchtime 2000x ./kennel/egress/
func BenchmarkAPIRoute(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"id":"msg_1","content":[{"type":"text","text":"ok"}]}`)
	}))
	defer up.Close()
	s := NewServer(Options{Gateways: []netip.Addr{}})
	if err := s.Configure(Config{Key: testKey, APIs: []API{{Name: "anthropic", Upstream: up.URL, Secrets: map[string]string{placeholder: realKey}}}}); err != nil {
		b.Fatal(err)
	}
	p := httptest.NewServer(s)
	defer p.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	body := strings.Repeat("x", 2048)
	measure := func(url string) []time.Duration {
		out := make([]time.Duration, 0, b.N)
		for range b.N {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			req.Header.Set("x-api-key", placeholder)
			start := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			out = append(out, time.Since(start))
		}
		slices.Sort(out)
		return out
	}
	pct := func(d []time.Duration, q float64) float64 {
		return float64(d[min(len(d)-1, int(float64(len(d))*q))].Microseconds()) / 1000
	}
	b.ResetTimer()
	direct := measure(up.URL + "/v1/messages")
	proxied := measure(p.URL + "/t/" + Token(testKey, "ws1", "claude", "bench") + "/anthropic/v1/messages")
	b.StopTimer()
	b.ReportMetric(pct(direct, 0.5), "direct-p50-ms")
	b.ReportMetric(pct(direct, 0.99), "direct-p99-ms")
	b.ReportMetric(pct(proxied, 0.5), "proxy-p50-ms")
	b.ReportMetric(pct(proxied, 0.99), "proxy-p99-ms")
	b.ReportMetric(pct(proxied, 0.5)-pct(direct, 0.5), "added-p50-ms")
	b.ReportMetric(pct(proxied, 0.99)-pct(direct, 0.99), "added-p99-ms")
}
