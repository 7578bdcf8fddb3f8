package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// FETCH_KENNEL_IDLE: a duration, 0 or off (never), 30m by default; anything
// else is a configuration problem that names the variable.
func TestKennelIdleSetting(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Duration
		bad   bool
	}{
		{"", 30 * time.Minute, false},
		{"2s", 2 * time.Second, false},
		{" 1h ", time.Hour, false},
		{"0", 0, false},
		{"off", 0, false},
		{"OFF", 0, false},
		{"soon", 0, true},
		{"-5m", 0, true},
	} {
		t.Run(tc.value, func(t *testing.T) {
			cfg, err := loadConfig(func(k string) string {
				switch k {
				case envKennelIdle:
					return tc.value
				case envDataDir:
					return t.TempDir()
				}
				return ""
			})
			var ce *ConfigError
			if tc.bad {
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), envKennelIdle) {
					t.Fatalf("%s=%q: %v; want a configuration problem naming it", envKennelIdle, tc.value, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s=%q: %v", envKennelIdle, tc.value, err)
			}
			if cfg.KennelIdle != tc.want {
				t.Fatalf("%s=%q: %v; want %v", envKennelIdle, tc.value, cfg.KennelIdle, tc.want)
			}
		})
	}
}
