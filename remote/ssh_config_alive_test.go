package remote

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSSHConfigTimeouts: ConnectTimeout, ServerAliveInterval and
// ServerAliveCountMax are read per host; bad or missing values read as 0
// (the defaults then apply).
func TestSSHConfigTimeouts(t *testing.T) {
	home := t.TempDir()
	cfgFile := filepath.Join(home, "config")
	if err := os.WriteFile(cfgFile, []byte(`
Host quick
  ConnectTimeout 3
  ServerAliveInterval 2
  ServerAliveCountMax 4
Host odd
  ConnectTimeout soon
  ServerAliveInterval -1
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := loadSSHConfig(cfgFile, home, "local")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target         string
		connect, alive time.Duration
		countMax       int
	}{
		{"quick", 3 * time.Second, 2 * time.Second, 4},
		{"odd", 0, 0, 0},
		{"plain", 0, 0, 0},
	} {
		h, err := c.resolve(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		if h.ConnectTimeout != tc.connect || h.AliveInterval != tc.alive || h.AliveCountMax != tc.countMax {
			t.Errorf("%s: connect %s, alive %s × %d; want %s, %s × %d", tc.target, h.ConnectTimeout, h.AliveInterval,
				h.AliveCountMax, tc.connect, tc.alive, tc.countMax)
		}
	}
}
