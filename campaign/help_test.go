package campaign

import (
	"strings"
	"testing"
)

// TestRenderHelp: the help call of a scenario, as the preflight runs it on
// the host: the launch's launcher and the profile's help words, or
// engine.help; none where the engine cannot be asked.
func TestRenderHelp(t *testing.T) {
	genericScen := "name: base\nengine: generic\nlaunch: [/opt/srv, --port, \"{port}\"]\n"
	tests := []struct {
		name  string
		files memFiles
		want  string // the command; "" for no call
		fmt   string
	}{
		{"sglang: host.python and the scenario's env", goodFiles,
			"env -- NCCL_PROTO=LL python3 -m sglang.launch_server --help", "argparse"},
		{"engine.command replaces the launcher, {bakeoff} expanded", top("engine:\n  command: [\"{bakeoff}\", sim, --sim-speed, \"40\"]\n"),
			"env -- NCCL_PROTO=LL /w/bin/bakeoff sim --sim-speed 40 --help", "argparse"},
		{"engine.help wins, in its own format", top("engine:\n  help: [cat, \"{workdir}/help.txt\"]\n  help_format: click\n"),
			"env -- NCCL_PROTO=LL cat /w/help.txt", "click"},
		{"engine.help off", top("engine:\n  help: off\n"), "", ""},
		{"llama.cpp: the help and a version call", goodFiles.with(memFiles{basePath: "name: base\nengine: llamacpp\nmodel: /m.gguf\n", specPath: "extends: base\n"}),
			"env -- llama-server --help", "llamacpp"},
		{"a scenario's own launch is not asked", goodFiles.with(memFiles{basePath: "name: base\nmodel: /m\nlaunch: [/opt/run.sh]\n"}), "", ""},
		{"generic without engine.help", goodFiles.with(memFiles{basePath: genericScen, specPath: "extends: base\n"}), "", ""},
		{"generic with engine.help", top("engine:\n  help: /opt/srv --help\n  help_format: argparse\n").with(memFiles{basePath: genericScen, specPath: "extends: base\n"}),
			"env -- /opt/srv --help", "argparse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := load(cfgPath, tt.files.read)
			if err != nil {
				t.Fatal(err)
			}
			h, err := RenderHelp(c, c.Scenarios[0], On{Bakeoff: "/w/bin/bakeoff", Workdir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want == "" && h != nil:
				t.Errorf("got %+v, want no help call", h)
			case tt.want != "" && (h == nil || h.Command != tt.want || h.Format != tt.fmt):
				t.Errorf("got %+v, want %q in %s", h, tt.want, tt.fmt)
			case h != nil && strings.Contains(h.Command, "llama-server") != (h.VersionCommand == "env -- llama-server --version"):
				t.Errorf("version command %q", h.VersionCommand)
			}
		})
	}
}

// TestHelpConfigErrors: engine.help's and engine.help_format's errors, at
// their lines.
func TestHelpConfigErrors(t *testing.T) {
	generic := memFiles{basePath: "name: base\nengine: generic\nlaunch: [/opt/srv]\n", specPath: "extends: base\n"}
	tests := []struct {
		name  string
		files memFiles
		want  string
	}{
		{"an unknown format", top("engine:\n  help_format: yaml\n"),
			`c/configs/camp.yaml:10:16: engine.help_format: "yaml" is not a help format (argparse, llamacpp, click)`},
		{"generic needs the format", top("engine:\n  help: [/opt/srv, --help]\n").with(generic),
			"c/configs/camp.yaml:10:9: engine.help: scenario base is engine generic, which has no help format of its own; name it with engine.help_format (argparse, llamacpp, click)"},
		{"quotes in the one-line form", top("engine:\n  help: /opt/srv 'x'\n"),
			"c/configs/camp.yaml:10:9: engine.help: quotes and backslashes are not interpreted in the one-line form; write a list of words"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(cfgPath, tt.files.read)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// TestLaunchFlagKeys: each word of a scenario's flags leads back to its arg
// key, and the key to the line that wrote it.
func TestLaunchFlagKeys(t *testing.T) {
	c, err := load(cfgPath, goodFiles.read)
	if err != nil {
		t.Fatal(err)
	}
	spec := c.Scenarios[1]
	l, err := Render(c, spec, On{})
	if err != nil {
		t.Fatal(err)
	}
	words := l.Argv[l.FlagsAt:]
	if len(words) != len(l.FlagKeys) || words[0] != "--max-running-requests" || l.FlagKeys[0] != "max-running-requests" || l.FlagKeys[1] != "max-running-requests" {
		t.Fatalf("words %q, keys %q", words, l.FlagKeys)
	}
	if got := spec.ArgAt("max-running-requests"); got != basePath+":5:3" {
		t.Errorf("ArgAt(inherited) = %s", got)
	}
	if got := spec.ArgAt("speculative-num-steps"); got != specPath+":4:3" {
		t.Errorf("ArgAt(own) = %s", got)
	}
}
