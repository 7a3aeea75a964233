package remote

import (
	"context"
	"testing"
)

func TestQuote(t *testing.T) {
	ctx := context.Background()
	for _, s := range []string{"", "plain", "two words", "it's", `"$HOME" \ ; rm -rf /`, "a\nb", "--flag=x"} {
		out, _, err := NewLocal().Run(ctx, "printf %s "+Quote(s))
		if err != nil || string(out) != s {
			t.Errorf("Quote(%q) read back as %q (%v)", s, out, err)
		}
	}
}

func TestQuotePath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"~", `"$HOME"`},
		{"~/bake off", `"$HOME"/'bake off'`},
		{"/data/bakeoff", "/data/bakeoff"},
		{"~user/x", "'~user/x'"},
	}
	for _, tt := range tests {
		if got := QuotePath(tt.in); got != tt.want {
			t.Errorf("QuotePath(%q) = %s; want %s", tt.in, got, tt.want)
		}
	}
}

func TestParseUname(t *testing.T) {
	tests := []struct{ in, os, arch string }{
		{"Linux x86_64\n", "linux", "amd64"},
		{"Linux aarch64", "linux", "arm64"},
		{"Darwin arm64", "darwin", "arm64"},
	}
	for _, tt := range tests {
		goos, goarch, err := ParseUname(tt.in)
		if err != nil || goos != tt.os || goarch != tt.arch {
			t.Errorf("ParseUname(%q) = %s, %s, %v", tt.in, goos, goarch, err)
		}
	}
	for _, bad := range []string{"", "Linux", "Plan9 mips"} {
		if _, _, err := ParseUname(bad); err == nil {
			t.Errorf("ParseUname(%q) succeeded", bad)
		}
	}
}
