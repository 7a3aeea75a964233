package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltin(t *testing.T) {
	s, err := Load(Builtin, "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != Builtin || len(s.Prompts) < 100 {
		t.Fatalf("builtin set %q has %d prompts, want at least 100", s.Name, len(s.Prompts))
	}
	if !strings.HasPrefix(s.Hash, "sha256:") || len(s.Hash) != len("sha256:")+64 {
		t.Errorf("hash %q", s.Hash)
	}
	seen := map[string]bool{}
	short, long, multi := 0, 0, 0
	for i, p := range s.Prompts {
		if seen[p.Text] {
			t.Errorf("prompt %d is a duplicate", i)
		}
		seen[p.Text] = true
		switch {
		case len(p.Text) < 80:
			short++
		case len(p.Text) > 500:
			long++
		}
		if len(p.Messages) > 1 {
			multi++
		}
	}
	// Speculative acceptance depends on the text: the set needs short
	// questions, long inputs and conversations, not one shape.
	if short < 10 || long < 10 || multi < 3 {
		t.Errorf("%d short, %d long, %d multi-message prompts; want a varied set", short, long, multi)
	}
	again, _ := Load("", "")
	if again.Hash != s.Hash {
		t.Error(`"" and "builtin" differ`)
	}
}

func TestParseShapes(t *testing.T) {
	in := `# a comment, then a blank line

{"prompt": "one"}
{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "two"}]}
{"conversations": [{"from": "human", "value": "three"}, {"from": "gpt", "value": "answer"}, {"from": "human", "value": "four"}, {"from": "gpt", "value": "dropped"}]}
`
	s, err := Parse("f.jsonl", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Prompts) != 3 {
		t.Fatalf("%d prompts", len(s.Prompts))
	}
	tests := []struct {
		roles, text string
	}{
		{"user", "one"},
		{"system,user", "be brief\n\ntwo"},
		{"user,assistant,user", "three\n\nanswer\n\nfour"},
	}
	for i, tt := range tests {
		p := s.Prompts[i]
		var roles []string
		for _, m := range p.Messages {
			roles = append(roles, m.Role)
		}
		if strings.Join(roles, ",") != tt.roles || p.Text != tt.text {
			t.Errorf("prompt %d: roles %v text %q, want %s %q", i, roles, p.Text, tt.roles, tt.text)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"bad JSON", "{\"prompt\": \"a\"}\n{\"prompt\": \n", "f.jsonl:2:"},
		{"unknown field", `{"promt": "a"}`, "f.jsonl:1: json: unknown field"},
		{"no prompt", `{}`, `want "prompt"`},
		{"empty prompt", `{"prompt": "  "}`, "empty prompt"},
		{"unknown role", `{"conversations": [{"from": "robot", "value": "x"}]}`, `unknown conversation role "robot"`},
		{"only an answer", `{"conversations": [{"from": "gpt", "value": "x"}]}`, "empty prompt"},
		{"empty file", "# nothing\n", "no prompts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("f.jsonl", []byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestHashIgnoresFormatting(t *testing.T) {
	a, err := Parse("a", []byte(`{"prompt": "x"}`+"\n"+`{"prompt": "y"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("b", []byte("# same content\n{\"prompt\":\"x\"}\n\n{\"messages\":[{\"content\":\"y\",\"role\":\"user\"}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := Parse("c", []byte(`{"prompt": "y"}`+"\n"+`{"prompt": "x"}`))
	if a.Hash != b.Hash {
		t.Error("the same prompts formatted differently hash differently")
	}
	if a.Hash == c.Hash {
		t.Error("a different order hashes the same")
	}
	// Length prefixes keep boundaries: "ab"+"c" is not "a"+"bc".
	d, _ := Parse("d", []byte(`{"messages":[{"role":"user","content":"ab"},{"role":"user","content":"c"}]}`))
	e, _ := Parse("e", []byte(`{"messages":[{"role":"user","content":"a"},{"role":"user","content":"bc"}]}`))
	if d.Hash == e.Hash {
		t.Error("message boundaries do not reach the hash")
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.jsonl"), []byte(`{"prompt": "hello"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load("p.jsonl", dir)
	if err != nil || len(s.Prompts) != 1 || s.Name != filepath.Join(dir, "p.jsonl") {
		t.Fatalf("relative load: %v %+v", err, s)
	}
	if _, err := Load(filepath.Join(dir, "p.jsonl"), "/elsewhere"); err != nil {
		t.Errorf("absolute path: %v", err)
	}
	if _, err := Load("missing.jsonl", dir); err == nil || !strings.Contains(err.Error(), "reading prompts") {
		t.Errorf("missing file: %v", err)
	}
}

// TestBuiltinCategories: every built-in prompt has a category, and each
// category has enough prompts for a per-category figure to mean something.
func TestBuiltinCategories(t *testing.T) {
	s, err := Load(Builtin, "")
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for i, p := range s.Prompts {
		if p.Category == "" {
			t.Errorf("prompt %d has no category", i)
		}
		count[p.Category]++
	}
	want := []string{"chat", "code", "math", "summarize", "creative", "short"}
	if got := s.Categories(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("categories %v, want %v", got, want)
	}
	for c, n := range count {
		if n < 10 {
			t.Errorf("category %s has %d prompts, want at least 10", c, n)
		}
	}
}
