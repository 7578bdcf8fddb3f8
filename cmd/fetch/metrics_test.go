package main

import (
	"strings"
	"testing"
)

// FETCH_METRICS_ADDR: off by default; a bare port or :PORT listens on the
// loopback interface only; a host given is kept; anything else is refused
// with the variable named.
func TestMetricsAddr(t *testing.T) {
	base := map[string]string{"HOME": t.TempDir()}
	for _, tc := range []struct {
		value, want, problem string
	}{
		{"", "", ""},
		{"9090", "127.0.0.1:9090", ""},
		{":9090", "127.0.0.1:9090", ""},
		{"0.0.0.0:9090", "0.0.0.0:9090", ""},
		{"[::1]:9090", "[::1]:9090", ""},
		{"localhost", "", envMetricsAddr},
		{":http-alt", "", envMetricsAddr},
		{":70000", "", envMetricsAddr},
	} {
		env := map[string]string{envMetricsAddr: tc.value}
		for k, v := range base {
			env[k] = v
		}
		cfg, err := loadConfig(func(k string) string { return env[k] })
		if tc.problem != "" {
			if err == nil || !strings.Contains(err.Error(), tc.problem) {
				t.Errorf("%q: error %v, want one naming %s", tc.value, err, tc.problem)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.value, err)
			continue
		}
		if cfg.MetricsAddr != tc.want {
			t.Errorf("%q: MetricsAddr = %q, want %q", tc.value, cfg.MetricsAddr, tc.want)
		}
	}
}
