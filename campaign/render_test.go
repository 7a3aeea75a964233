package campaign

import (
	"cmp"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/engine"
)

func TestRender(t *testing.T) {
	model := "/data/models/Kimi-K2.5-INT4"
	args := []Arg{
		{Key: "enable-metrics", Bare: true},
		{Key: "lora", Values: []string{"a", "b c"}},
		{Key: "mem-fraction-static", Values: []string{"0.85"}},
		{Key: "tp", Values: []string{"8"}},
	}
	tests := []struct {
		name     string
		c        Campaign
		s        Scenario
		bakeoff  string
		wantArgv []string
		wantCmd  string
	}{
		{"sglang default launcher",
			Campaign{Engine: EngineOpts{Port: 30000}},
			Scenario{Name: "b", Engine: engine.SGLang, Model: model, Args: args},
			"",
			[]string{"python3", "-m", "sglang.launch_server", "--model-path", model, "--host", "127.0.0.1", "--port", "30000",
				"--enable-metrics", "--lora", "a", "--lora", "b c", "--mem-fraction-static", "0.85", "--tp", "8"},
			"env -- python3 -m sglang.launch_server --model-path /data/models/Kimi-K2.5-INT4 --host 127.0.0.1 --port 30000 --enable-metrics --lora a --lora 'b c' --mem-fraction-static 0.85 --tp 8"},
		{"host python and env, scenario wins",
			Campaign{Host: Host{Python: "/opt/venv/bin/python"}, Engine: EngineOpts{Port: 31000, Env: map[string]string{"A": "1", "B": "campaign"}}},
			Scenario{Name: "b", Model: model, Env: map[string]string{"B": "it's", "C": "$(x)"}},
			"",
			[]string{"/opt/venv/bin/python", "-m", "sglang.launch_server", "--model-path", model, "--host", "127.0.0.1", "--port", "31000"},
			`env -- A=1 B='it'\''s' C='$(x)' /opt/venv/bin/python -m sglang.launch_server --model-path /data/models/Kimi-K2.5-INT4 --host 127.0.0.1 --port 31000`},
		{"engine.command replaces the launcher prefix",
			Campaign{Engine: EngineOpts{Port: 30000, Command: []string{"{bakeoff}", "sim", "--sim-speed", "20"}}},
			Scenario{Name: "b", Engine: engine.SGLang, Model: model, Args: args[3:]},
			"/abs/path/bakeoff",
			[]string{"/abs/path/bakeoff", "sim", "--sim-speed", "20", "--model-path", model, "--host", "127.0.0.1", "--port", "30000", "--tp", "8"},
			"env -- /abs/path/bakeoff sim --sim-speed 20 --model-path /data/models/Kimi-K2.5-INT4 --host 127.0.0.1 --port 30000 --tp 8"},
		{"{bakeoff} stays when the path is unknown",
			Campaign{Engine: EngineOpts{Port: 30000, Command: []string{"{bakeoff}", "sim"}}},
			Scenario{Name: "b", Model: model},
			"",
			[]string{"{bakeoff}", "sim", "--model-path", model, "--host", "127.0.0.1", "--port", "30000"},
			"env -- '{bakeoff}' sim --model-path /data/models/Kimi-K2.5-INT4 --host 127.0.0.1 --port 30000"},
		{"vllm default launcher",
			Campaign{Engine: EngineOpts{Port: 8000}},
			Scenario{Name: "v", Engine: engine.VLLM, Model: "Qwen/Qwen3-8B", Args: []Arg{{Key: "speculative-config", Values: []string{`{"method":"eagle3","num_speculative_tokens":3}`}}}},
			"",
			[]string{"vllm", "serve", "Qwen/Qwen3-8B", "--host", "127.0.0.1", "--port", "8000", "--speculative-config", `{"method":"eagle3","num_speculative_tokens":3}`},
			`env -- vllm serve Qwen/Qwen3-8B --host 127.0.0.1 --port 8000 --speculative-config '{"method":"eagle3","num_speculative_tokens":3}'`},
		{"vllm with engine.command",
			Campaign{Engine: EngineOpts{Port: 8000, Command: []string{"/venv/bin/vllm", "serve"}}},
			Scenario{Name: "v", Engine: engine.VLLM, Model: "m"},
			"",
			[]string{"/venv/bin/vllm", "serve", "m", "--host", "127.0.0.1", "--port", "8000"},
			"env -- /venv/bin/vllm serve m --host 127.0.0.1 --port 8000"},
		{"scenario launch replaces everything",
			Campaign{Engine: EngineOpts{Port: 30001, Command: []string{"ignored"}}},
			Scenario{Name: "g", Engine: engine.Generic, Model: "/m", Launch: []string{"{bakeoff}", "serve", "--weights={model}", "--listen", "127.0.0.1:{port}"}, Args: args[:1]},
			"/bin/bk",
			[]string{"/bin/bk", "serve", "--weights=/m", "--listen", "127.0.0.1:30001", "--enable-metrics"},
			"env -- /bin/bk serve --weights=/m --listen 127.0.0.1:30001 --enable-metrics"},
		{"default port",
			Campaign{},
			Scenario{Name: "b", Model: "m"},
			"",
			[]string{"python3", "-m", "sglang.launch_server", "--model-path", "m", "--host", "127.0.0.1", "--port", "30000"},
			"env -- python3 -m sglang.launch_server --model-path m --host 127.0.0.1 --port 30000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Render(&tt.c, &tt.s, On{Bakeoff: tt.bakeoff})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(l.Argv, tt.wantArgv) {
				t.Errorf("argv:\n got %q\nwant %q", l.Argv, tt.wantArgv)
			}
			if l.Command != tt.wantCmd {
				t.Errorf("command:\n got %s\nwant %s", l.Command, tt.wantCmd)
			}
			wantEnv := maps.Clone(tt.c.Engine.Env)
			if wantEnv == nil {
				wantEnv = map[string]string{}
			}
			maps.Copy(wantEnv, tt.s.Env)
			if !reflect.DeepEqual(l.Env, wantEnv) {
				t.Errorf("env: got %v, want %v", l.Env, wantEnv)
			}
		})
	}
}

func TestRenderRefuses(t *testing.T) {
	tests := []struct {
		name string
		c    Campaign
		s    Scenario
		want string
	}{
		{"generic without launch", Campaign{}, Scenario{Name: "g", Engine: engine.Generic}, "engine generic needs a launch command"},
		{"no model", Campaign{}, Scenario{Name: "b", Engine: engine.SGLang}, "no model"},
		{"unknown engine", Campaign{}, Scenario{Name: "b", Engine: "tgi", Model: "m"}, `unknown engine "tgi"`},
		{"NUL in a value", Campaign{}, Scenario{Name: "b", Model: "m", Args: []Arg{{Key: "x", Values: []string{"a\x00b"}}}}, "NUL or a newline"},
		{"newline in the model", Campaign{}, Scenario{Name: "b", Model: "m\n"}, "NUL or a newline"},
		{"bad variable name", Campaign{}, Scenario{Name: "b", Model: "m", Env: map[string]string{"A B": "x"}}, `invalid environment variable name "A B"`},
		{"newline in a variable", Campaign{Engine: EngineOpts{Env: map[string]string{"A": "x\ny"}}}, Scenario{Name: "b", Model: "m"}, "variable A contains"},
		{"assignment-like command", Campaign{}, Scenario{Name: "b", Launch: []string{"A=b", "x"}}, "env(1) would take"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(&tt.c, &tt.s, On{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestRenderThroughShell runs a rendered command with `sh -c` and checks
// that the stand-in engine receives every argument and variable byte for
// byte, however hostile.
func TestRenderThroughShell(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	hostile := []string{
		"a b", "it's", `"double"`, "$(touch pwned)", "`touch pwned`", "$HOME", "${HOME}", "*", "?", "[a]",
		"~", "~root", "#comment", "a;b", "a|b", "a&b", "a>b", "<", "\\", "\\n", "\t", "", "-", "--", "{a,b}",
		"é ü 中文", "\x01\x7f\xff", "!", "!!", "a=b", "%s", "'", "''", "'\\''",
	}
	var args []Arg
	for i, v := range hostile {
		args = append(args, Arg{Key: "k" + string(rune('a'+i%26)) + strings.Repeat("x", i/26), Values: []string{v}})
	}
	slices.SortFunc(args, func(a, b Arg) int { return strings.Compare(a.Key, b.Key) })
	env := map[string]string{echoEnv: "1", "HOSTILE": "$(touch pwned) 'x' `y` \\ \"z\"", "EMPTY": ""}
	env[echoVars] = "HOSTILE,EMPTY,CAMPAIGN_ONLY"
	c := &Campaign{Engine: EngineOpts{Port: 30000, Env: map[string]string{"CAMPAIGN_ONLY": "c v", "HOSTILE": "loses"}}}
	s := &Scenario{Name: "x", Engine: engine.Generic, Model: "/m o'del", Launch: []string{"{bakeoff}", "{model}", "{port}"}, Args: args, Env: env}
	l, err := Render(c, s, On{Bakeoff: self})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", l.Command)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh -c %s: %v", l.Command, err)
	}
	var got echoed
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("engine output %q: %v", out, err)
	}
	if !reflect.DeepEqual(got.args(), l.Argv[1:]) {
		t.Errorf("arguments changed on the way:\n got %q\nwant %q", got.args(), l.Argv[1:])
	}
	wantEnv := map[string]string{"HOSTILE": env["HOSTILE"], "EMPTY": "", "CAMPAIGN_ONLY": "c v"}
	if !reflect.DeepEqual(got.env(), wantEnv) {
		t.Errorf("environment changed on the way:\n got %q\nwant %q", got.env(), wantEnv)
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("the shell ran something: %v", entries)
	}
}

// TestRenderWorkdir: {workdir} becomes the host's workdir in arg and env
// values, and a directory the engine needs (llama.cpp's slot save path) is
// named for the launch to create, a relative one under the workdir.
func TestRenderWorkdir(t *testing.T) {
	c := &Campaign{Engine: EngineOpts{Port: 8080}}
	tests := []struct {
		name     string
		slots    string
		workdir  string
		wantArg  string
		wantDirs []string
	}{
		{"token", "{workdir}/llama-slots", "/tmp/bakeoff-local-0", "/tmp/bakeoff-local-0/llama-slots", []string{"/tmp/bakeoff-local-0/llama-slots"}},
		{"absolute", "/data/slots", "/w", "/data/slots", []string{"/data/slots"}},
		{"relative to the workdir", "slots", "/w", "slots", []string{"/w/slots"}},
		{"workdir unknown: shown as written", "{workdir}/s", "", "{workdir}/s", []string{"{workdir}/s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Scenario{Name: "l", Engine: engine.LlamaCpp, Model: "/m.gguf",
				Args: []Arg{{Key: "slot-save-path", Values: []string{tt.slots}}},
				Env:  map[string]string{"CACHE": "{workdir}/c"}}
			l, err := Render(c, s, On{Workdir: tt.workdir})
			if err != nil {
				t.Fatal(err)
			}
			if i := slices.Index(l.Argv, "--slot-save-path"); i < 0 || l.Argv[i+1] != tt.wantArg {
				t.Errorf("argv %q, want --slot-save-path %s", l.Argv, tt.wantArg)
			}
			if !reflect.DeepEqual(l.Dirs, tt.wantDirs) {
				t.Errorf("dirs %q, want %q", l.Dirs, tt.wantDirs)
			}
			if want := strings.ReplaceAll("{workdir}/c", "{workdir}", cmp.Or(tt.workdir, "{workdir}")); l.Env["CACHE"] != want {
				t.Errorf("env CACHE=%q, want %q", l.Env["CACHE"], want)
			}
		})
	}
	// An engine with no directory args creates nothing.
	l, err := Render(c, &Scenario{Name: "s", Model: "/m", Args: []Arg{{Key: "slot-save-path", Values: []string{"/x"}}}}, On{Workdir: "/w"})
	if err != nil || len(l.Dirs) != 0 {
		t.Errorf("sglang: dirs %q, err %v", l.Dirs, err)
	}
}
