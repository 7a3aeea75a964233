package campaign

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"testing"
)

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "''"},
		{"plain", "plain"},
		{"/opt/venv/bin/python", "/opt/venv/bin/python"},
		{"0.85", "0.85"},
		{"--key=value,x:y@h%", "--key=value,x:y@h%"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"$(x)", "'$(x)'"},
		{"~", "'~'"},
		{"{bakeoff}", "'{bakeoff}'"},
		{"a\nb", "'a\nb'"},
	}
	for _, tt := range tests {
		if got := ShellQuote(tt.in); got != tt.want {
			t.Errorf("ShellQuote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := ShellJoin([]string{"A=b", "c=d", "e f"}); got != "'A=b' c=d 'e f'" {
		t.Errorf("ShellJoin = %s", got)
	}
}

// quotingRuns bounds the property tests: each run starts a shell.
const quotingRuns = 300

// randomBytes returns a string of up to 40 bytes without NUL, biased
// towards the bytes a shell treats specially.
func randomBytes(r *rand.Rand) string {
	const special = " \t\n'\"\\$`!*?[]{}~#;&|<>()=%-"
	b := make([]byte, r.IntN(41))
	for i := range b {
		if r.IntN(2) == 0 {
			b[i] = special[r.IntN(len(special))]
		} else {
			b[i] = byte(1 + r.IntN(255))
		}
	}
	return string(b)
}

// TestShellQuoteProperty: any byte string without NUL, quoted and printed by
// a real sh, comes back unchanged.
func TestShellQuoteProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range quotingRuns {
		s := randomBytes(r)
		out, err := exec.Command("sh", "-c", "printf %s "+ShellQuote(s)).Output()
		if err != nil {
			t.Fatalf("sh for %q: %v", s, err)
		}
		if string(out) != s {
			t.Fatalf("printf %%s %s\n got %q\nwant %q", ShellQuote(s), out, s)
		}
	}
}

// TestShellJoinProperty: a whole argv of random words reaches a program
// unchanged.
func TestShellJoinProperty(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range quotingRuns / 10 {
		argv := []string{self}
		for range 1 + r.IntN(10) {
			argv = append(argv, randomBytes(r))
		}
		cmd := exec.Command("sh", "-c", ShellJoin(argv))
		cmd.Env = append(os.Environ(), echoEnv+"=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("sh -c %s: %v", ShellJoin(argv), err)
		}
		var got echoed
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.args(), argv[1:]) {
			t.Fatalf("sh -c %s\n got %q\nwant %q", ShellJoin(argv), got.args(), argv[1:])
		}
	}
}
