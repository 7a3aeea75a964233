package campaign

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

const eaglePath = "c/scenarios/eagle3.yaml"

// withSpace is goodFiles whose campaign compares base with eagle3, a
// scenario written in eagle (its space among it).
func withSpace(eagle string) memFiles {
	return goodFiles.with(memFiles{
		cfgPath:   strings.Replace(goodFiles[cfgPath], "[base, spec]", "[base, eagle3]", 1),
		eaglePath: eagle,
	})
}

// eagleHead starts eagle3.yaml: its space: is on line 5.
const eagleHead = "name: eagle3\nextends: base\nargs:\n  speculative-algorithm: EAGLE3\n"

func scenarioNames(c *Campaign) []string {
	var out []string
	for _, s := range c.Scenarios {
		out = append(out, s.Name)
	}
	return out
}

func TestSpaceExpand(t *testing.T) {
	tests := []struct {
		name      string
		files     memFiles
		wantNames []string // after base
		wantLines []string // Space.Lines of the one space
	}{
		{"a grid, the first axis slowest",
			withSpace(eagleHead + "space:\n  args:\n    speculative-num-steps: [1, 2]\n    speculative-eagle-topk: [1, 4]\n"),
			[]string{"eagle3.steps1.topk1", "eagle3.steps1.topk4", "eagle3.steps2.topk1", "eagle3.steps2.topk4"},
			[]string{"eagle3 (c/scenarios/eagle3.yaml:5:1): 2 steps × 2 topk = 4 combinations, 4 points"}},
		{"one axis",
			withSpace(eagleHead + "space:\n  args:\n    cuda-graph-max-bs: [80, 160]\n"),
			[]string{"eagle3.bs80", "eagle3.bs160"},
			[]string{"eagle3 (c/scenarios/eagle3.yaml:5:1): 2 bs, 2 points"}},
		// SGLang forces draft tokens to steps + 1 with topk 1, and a tree
		// holds at most topk × steps + 1 of them.
		{"constraints drop, each counted at the first that drops",
			withSpace(eagleHead + `space:
  args:
    speculative-num-steps: [1, 2, 3]
    speculative-eagle-topk: [1, 4]
    speculative-num-draft-tokens: [2, 4, 8]
  constraints:
    - speculative_eagle_topk > 1 || speculative_num_draft_tokens == speculative_num_steps + 1
    - speculative_num_draft_tokens <= speculative_eagle_topk * speculative_num_steps + 1
`),
			[]string{
				"eagle3.steps1.topk1.tokens2", "eagle3.steps1.topk4.tokens2", "eagle3.steps1.topk4.tokens4",
				"eagle3.steps2.topk4.tokens2", "eagle3.steps2.topk4.tokens4", "eagle3.steps2.topk4.tokens8",
				"eagle3.steps3.topk1.tokens4", "eagle3.steps3.topk4.tokens2", "eagle3.steps3.topk4.tokens4", "eagle3.steps3.topk4.tokens8",
			},
			[]string{
				"eagle3 (c/scenarios/eagle3.yaml:5:1): 3 steps × 2 topk × 3 tokens = 18 combinations, 10 points",
				"space.constraints[0] (line 11) drops 7: speculative_eagle_topk > 1 || speculative_num_draft_tokens == speculative_num_steps + 1",
				"space.constraints[1] (line 12) drops 1: speculative_num_draft_tokens <= speculative_eagle_topk * speculative_num_steps + 1",
			}},
		{"exclusions: a value, a list of values, an axis by its name in constraints",
			withSpace(eagleHead + `space:
  args:
    speculative-eagle-topk: [1, 2, 4]
    disable-overlap-schedule: {values: [true, false], label: sync}
  exclude:
    - {speculative-eagle-topk: [2, 4], disable-overlap-schedule: false}
    - {speculative_eagle_topk: 1, disable-overlap-schedule: true}
`),
			[]string{"eagle3.topk1.sync-off", "eagle3.topk2.sync-on", "eagle3.topk4.sync-on"},
			[]string{
				"eagle3 (c/scenarios/eagle3.yaml:5:1): 3 topk × 2 sync = 6 combinations, 3 points",
				"space.exclude[0] (line 10) drops 2: {speculative-eagle-topk: [2, 4], disable-overlap-schedule: false}",
				"space.exclude[1] (line 11) drops 1: {speculative-eagle-topk: 1, disable-overlap-schedule: true}",
			}},
		{"labels: written, empty, a switch's whole name, a variable's last word",
			withSpace(eagleHead + `space:
  args:
    speculative-num-steps: {values: [1, 3], label: s}
    attention-backend: {values: [fa3, triton], label: ""}
    enable-torch-compile: [true, false]
  env:
    SGLANG_ENABLE_SPEC_V2: ["0", "1"]
`),
			[]string{
				"eagle3.s1.fa3.enable-torch-compile-on.v2-0", "eagle3.s1.fa3.enable-torch-compile-on.v2-1",
				"eagle3.s1.fa3.enable-torch-compile-off.v2-0", "eagle3.s1.fa3.enable-torch-compile-off.v2-1",
				"eagle3.s1.triton.enable-torch-compile-on.v2-0", "eagle3.s1.triton.enable-torch-compile-on.v2-1",
				"eagle3.s1.triton.enable-torch-compile-off.v2-0", "eagle3.s1.triton.enable-torch-compile-off.v2-1",
				"eagle3.s3.fa3.enable-torch-compile-on.v2-0", "eagle3.s3.fa3.enable-torch-compile-on.v2-1",
				"eagle3.s3.fa3.enable-torch-compile-off.v2-0", "eagle3.s3.fa3.enable-torch-compile-off.v2-1",
				"eagle3.s3.triton.enable-torch-compile-on.v2-0", "eagle3.s3.triton.enable-torch-compile-on.v2-1",
				"eagle3.s3.triton.enable-torch-compile-off.v2-0", "eagle3.s3.triton.enable-torch-compile-off.v2-1",
			},
			nil},
		{"a label takes as many last words as tell the axes apart",
			withSpace(eagleHead + "space:\n  args:\n    cuda-graph-max-bs: [8]\n    max-running-requests: [64, 128]\n    chunked-prefill-size: [4096]\n    max-prefill-tokens: [8192]\n    speculative-num-draft-tokens: [4]\n"),
			[]string{"eagle3.bs8.requests64.size4096.prefill-tokens8192.draft-tokens4", "eagle3.bs8.requests128.size4096.prefill-tokens8192.draft-tokens4"},
			nil},
		{"floats and integers mixed, values that need a separator",
			withSpace(eagleHead + `space:
  args:
    mem-fraction-static: {values: [0.8, 0.85, 1], label: mem}
    attention-backend: [fa3, "flash/infer"]
  constraints:
    - mem_fraction_static < 1
`),
			[]string{"eagle3.mem0.8.backend-fa3", "eagle3.mem0.8.backend-flash_infer", "eagle3.mem0.85.backend-fa3", "eagle3.mem0.85.backend-flash_infer"},
			[]string{
				"eagle3 (c/scenarios/eagle3.yaml:5:1): 3 mem × 2 backend = 6 combinations, 4 points",
				"space.constraints[0] (line 10) drops 2: mem_fraction_static < 1",
			}},
		{"a condition over strings and booleans",
			withSpace(eagleHead + `space:
  args:
    attention-backend: [fa3, flashinfer, triton]
    enable-torch-compile: {values: [true, false], label: compile}
  constraints:
    - 'attention_backend != "triton" && (enable_torch_compile || attention_backend startsWith "flash")'
`),
			[]string{"eagle3.backend-fa3.compile-on", "eagle3.backend-flashinfer.compile-on", "eagle3.backend-flashinfer.compile-off"},
			nil},
		{"a child inherits its parent's space, named after itself",
			withSpace(eagleHead + "space:\n  args:\n    speculative-eagle-topk: [1, 4]\n").with(memFiles{
				cfgPath:                       strings.Replace(goodFiles[cfgPath], "[base, spec]", "[base, eagle3-tp4]", 1),
				"c/scenarios/eagle3-tp4.yaml": "extends: eagle3\nargs:\n  tp: 4\n",
			}),
			[]string{"eagle3-tp4.topk1", "eagle3-tp4.topk4"},
			[]string{"eagle3-tp4 (c/scenarios/eagle3.yaml:5:1): 2 topk, 2 points"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, errs := loadMem(t, tt.files)
			if errs != nil {
				t.Fatalf("errors:\n%s", strings.Join(errs, "\n"))
			}
			if got := scenarioNames(c)[1:]; !slices.Equal(got, tt.wantNames) {
				t.Errorf("points:\n got %q\nwant %q", got, tt.wantNames)
			}
			if len(c.Spaces) != 1 {
				t.Fatalf("%d spaces, want 1", len(c.Spaces))
			}
			if !slices.Equal(c.Spaces[0].Points, tt.wantNames) {
				t.Errorf("Space.Points %q, want the points %q", c.Spaces[0].Points, tt.wantNames)
			}
			if got := c.Spaces[0].Lines(); tt.wantLines != nil && !slices.Equal(got, tt.wantLines) {
				t.Errorf("lines:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tt.wantLines, "\n     "))
			}
			if c.Baseline != "base" {
				t.Errorf("baseline %q", c.Baseline)
			}
		})
	}
}

// TestSpacePoint: a point is its scenario with each axis's value: a flag
// rendered as args render it (true bare, false left out, an inherited
// value replaced), a variable set, positions at the values, and a
// description that spells the values out.
func TestSpacePoint(t *testing.T) {
	files := withSpace(`name: eagle3
description: EAGLE-3 search
extends: base
args:
  speculative-algorithm: EAGLE3
  enable-metrics: true
space:
  args:
    tp: [2, 4]
    enable-metrics: [false]
    disable-overlap-schedule: {values: [true], label: sync}
  env:
    SGLANG_ENABLE_SPEC_V2: ["1"]
`)
	// enable-metrics is written in args and in the space of one file: see
	// TestSpaceErrors; here the base sets it instead.
	files = files.with(memFiles{
		basePath:  strings.Replace(goodFiles[basePath], "  tp: 2\n", "  tp: 2\n  enable-metrics: true\n", 1),
		eaglePath: strings.Replace(files[eaglePath], "  enable-metrics: true\n", "", 1),
	})
	c, errs := loadMem(t, files)
	if errs != nil {
		t.Fatalf("errors:\n%s", strings.Join(errs, "\n"))
	}
	p := c.Scenarios[2]
	if p.Name != "eagle3.tp4.enable-metrics-off.sync-on.v2-1" {
		t.Fatalf("second point %q", p.Name)
	}
	want := []Arg{
		{Key: "disable-overlap-schedule", Bare: true},
		{Key: "max-running-requests", Values: []string{"64"}},
		{Key: "speculative-algorithm", Values: []string{"EAGLE3"}},
		{Key: "tp", Values: []string{"4"}},
	}
	if !reflect.DeepEqual(p.Args, want) {
		t.Errorf("args %+v\nwant %+v", p.Args, want)
	}
	if !reflect.DeepEqual(p.Env, map[string]string{"NCCL_PROTO": "LL", "SGLANG_ENABLE_SPEC_V2": "1"}) {
		t.Errorf("env %v", p.Env)
	}
	if got := p.ArgAt("tp"); got != "c/scenarios/eagle3.yaml:8:13" {
		t.Errorf("tp written at %s, want the value 4 in the space", got)
	}
	if got := p.ArgAt("speculative-algorithm"); got != "c/scenarios/eagle3.yaml:5:3" {
		t.Errorf("speculative-algorithm written at %s", got)
	}
	if got := p.src.envPos["SGLANG_ENABLE_SPEC_V2"].String(); got != "c/scenarios/eagle3.yaml:12:29" {
		t.Errorf("the variable written at %s", got)
	}
	const desc = "EAGLE-3 search (tp=4 enable-metrics=false disable-overlap-schedule=true SGLANG_ENABLE_SPEC_V2=1)"
	if p.Description != desc {
		t.Errorf("description %q, want %q", p.Description, desc)
	}
	if p.File != eaglePath || p.Extends != "base" || p.space != nil {
		t.Errorf("file %q, extends %q, space %v", p.File, p.Extends, p.space)
	}
}

func TestSpaceErrors(t *testing.T) {
	space := func(body string) memFiles { return withSpace(eagleHead + "space:\n" + body) }
	tests := []struct {
		name  string
		files memFiles
		want  []string
	}{
		{"not a mapping", space("  [1, 2]\n"),
			[]string{`c/scenarios/eagle3.yaml:6:3: space: want a mapping, got a list`}},
		{"unknown key", space("  args: {tp: [1]}\n  axes: {}\n"),
			[]string{`c/scenarios/eagle3.yaml:7:3: space: unknown key "axes" (known: args, constraints, env, exclude)`}},
		{"no axes", space("  constraints: [tp > 1]\n"),
			[]string{`c/scenarios/eagle3.yaml:5:1: space: no axes (give space.args or space.env, each axis a list of values)`}},
		{"an axis with no values", space("  args:\n    speculative-num-steps: []\n"),
			[]string{`c/scenarios/eagle3.yaml:7:28: space.args.speculative-num-steps: no values (an axis takes at least one)`}},
		{"an axis that is not a list", space("  args:\n    speculative-num-steps: 3\n"),
			[]string{`c/scenarios/eagle3.yaml:7:28: space.args.speculative-num-steps: want a list of values (or {values: [...], label: ...}), got "3"`}},
		{"non-scalar values", space("  args:\n    lora: [[a, b], {x: 1}, null]\n"),
			[]string{
				`c/scenarios/eagle3.yaml:7:12: space.args.lora[0]: want a value (a number, a word, true or false), got a list`,
				`c/scenarios/eagle3.yaml:7:20: space.args.lora[1]: want a value (a number, a word, true or false), got a mapping`,
				`c/scenarios/eagle3.yaml:7:28: space.args.lora[2]: want a value (a number, a word, true or false), got nothing (null)`,
			}},
		{"a value repeated", space("  args:\n    tp: [2, 4, 2.0]\n"),
			[]string{`c/scenarios/eagle3.yaml:7:16: space.args.tp[2]: 2.0 repeated (first at line 7)`}},
		{"values without a mapping's values", space("  args:\n    tp: {label: t}\n"),
			[]string{`c/scenarios/eagle3.yaml:7:9: space.args.tp: values: missing (the list of values the axis takes)`}},
		{"a label with a dot", space("  args:\n    tp: {values: [2], label: t.p}\n"),
			[]string{`c/scenarios/eagle3.yaml:7:30: space.args.tp.label: "t.p": letters, digits, '_' and '-' only (a '.' separates the axes in a point's name)`}},
		{"bad axis names", space("  args:\n    --tp: [2]\n  env:\n    1X: [a]\n"),
			[]string{
				`c/scenarios/eagle3.yaml:7:5: space.args: key "--tp": write it without leading dashes ("tp")`,
				`c/scenarios/eagle3.yaml:9:5: space.env: "1X" is not a valid environment variable name (letters, digits and '_', not starting with a digit)`,
			}},
		{"a duplicate axis in one mapping", space("  args:\n    tp: [2]\n    tp: [4]\n"),
			[]string{`c/scenarios/eagle3.yaml:8:5: space.args: duplicate key "tp" (first at line 7)`}},
		{"a duplicate axis by its name in constraints", space("  args:\n    max-running-requests: [8]\n    max_running_requests: [16]\n"),
			[]string{`c/scenarios/eagle3.yaml:8:5: space.args.max_running_requests: duplicate axis: space.args.max-running-requests (line 7) has the same name in constraints, max_running_requests`}},
		{"a duplicate axis in args and env", space("  args:\n    FOO: [1]\n  env:\n    FOO: [a]\n"),
			[]string{`c/scenarios/eagle3.yaml:9:5: space.env.FOO: duplicate axis: space.args.FOO (line 7) varies the same name`}},
		{"two axes with one label", space("  args:\n    tp: {values: [2], label: x}\n    dp: {values: [1], label: x}\n"),
			[]string{`c/scenarios/eagle3.yaml:8:5: space.args.dp: label "x" is also that of space.args.tp (line 7); give one of them a label of its own ({values: [...], label: ...})`}},
		{"two values with one name", space("  args:\n    served-model-name: [a/b, a_b]\n"),
			[]string{`c/scenarios/eagle3.yaml:7:30: space.args.served-model-name: a_b and a/b (line 7) would both name their points "name-a_b"`}},
		{"an axis also in args", withSpace(eagleHead + "  speculative-num-steps: 3\nspace:\n  args:\n    speculative-num-steps: [1, 2]\n"),
			[]string{`c/scenarios/eagle3.yaml:5:3: args.speculative-num-steps: also an axis of its space (line 6); a point takes its value from the space, so set it in one place`}},
		{"an axis also in env", withSpace(eagleHead + "env:\n  X: \"1\"\nspace:\n  env:\n    X: [\"0\", \"1\"]\n"),
			[]string{`c/scenarios/eagle3.yaml:6:3: env.X: also an axis of its space (line 7); a point takes its value from the space, so set it in one place`}},
		{"an axis a child sets in args", withSpace(eagleHead + "space:\n  args:\n    tp: [2, 4]\n").with(memFiles{
			cfgPath:                       strings.Replace(goodFiles[cfgPath], "[base, spec]", "[base, eagle3-tp4]", 1),
			"c/scenarios/eagle3-tp4.yaml": "extends: eagle3\nargs:\n  tp: 4\n"}),
			[]string{`c/scenarios/eagle3-tp4.yaml:3:3: args.tp: an axis of the space it inherits (c/scenarios/eagle3.yaml:5:1); a point takes its value from the space, so set it in one place`}},
		{"constraints not a list", space("  args: {tp: [2]}\n  constraints: tp > 1\n"),
			[]string{`c/scenarios/eagle3.yaml:7:16: space.constraints: want a list of conditions, got "tp > 1"`}},
		{"a constraint that names no axis", space("  args: {tp: [2, 4]}\n  constraints: [1 < 2]\n"),
			[]string{`c/scenarios/eagle3.yaml:7:17: space.constraints[0]: names no axis, so it keeps or drops every combination alike (the axes are tp)`}},
		{"a constraint that binds a name of its own but names no axis", space("  args: {tp: [2, 4]}\n  constraints: [\"let x = 2; x > 1\"]\n"),
			[]string{`c/scenarios/eagle3.yaml:7:17: space.constraints[0]: names no axis, so it keeps or drops every combination alike (the axes are tp)`}},
		{"a constraint with an unknown name", space("  args: {tp: [2, 4], speculative-num-steps: [1]}\n  constraints: [tp > dp]\n"),
			[]string{`c/scenarios/eagle3.yaml:7:17: space.constraints[0]: unknown name dp (the axes are tp, speculative_num_steps)`}},
		{"a constraint that spells an axis with dashes", space("  args: {tp: [2, 4], speculative-num-steps: [1]}\n  constraints: [speculative-num-steps < tp]\n"),
			[]string{`c/scenarios/eagle3.yaml:7:17: space.constraints[0]: unknown name speculative, num, steps (the axes are tp, speculative_num_steps); in a constraint write speculative-num-steps as speculative_num_steps`}},
		{"a constraint that does not parse", space("  args: {tp: [2, 4]}\n  constraints: [\"tp = 2\"]\n"),
			[]string{`c/scenarios/eagle3.yaml:7:17: space.constraints[0]: does not compile: unexpected token Operator("=") at column 4`}},
		{"a constraint whose types do not fit", space("  args: {tp: [2, 4], attention-backend: [fa3]}\n  constraints: [attention_backend > tp]\n"),
			[]string{`c/scenarios/eagle3.yaml:7:17: space.constraints[0]: does not compile: invalid operation: > (mismatched types string and int) at column 19`}},
		{"a constraint that is not boolean", space("  args: {tp: [2, 4]}\n  constraints: [tp * 2]\n"),
			[]string{`c/scenarios/eagle3.yaml:7:17: space.constraints[0]: is not a condition: it gives int, not true or false`}},
		{"a constraint that fails at a point", space("  args: {cuda-graph-max-bs: [false, 160]}\n  constraints: [cuda_graph_max_bs > 100]\n"),
			[]string{`c/scenarios/eagle3.yaml:7:17: space.constraints[0]: at eagle3.bs-off: invalid operation: bool > int at column 19`}},
		{"an empty constraint", space("  args: {tp: [2, 4]}\n  constraints: [\"\"]\n"),
			[]string{`c/scenarios/eagle3.yaml:7:17: space.constraints[0]: empty`}},
		{"exclude not a list of mappings", space("  args: {tp: [2, 4]}\n  exclude: [tp]\n"),
			[]string{`c/scenarios/eagle3.yaml:7:13: space.exclude[0]: want a mapping of axes to values ({speculative-eagle-topk: 4}), got "tp"`}},
		{"exclude of nothing", space("  args: {tp: [2, 4]}\n  exclude: [{}]\n"),
			[]string{`c/scenarios/eagle3.yaml:7:13: space.exclude[0]: empty: it would drop every combination`}},
		{"exclude of an unknown axis or value", space("  args: {tp: [2, 4]}\n  exclude:\n    - {dp: 2}\n    - {tp: 8}\n"),
			[]string{
				`c/scenarios/eagle3.yaml:8:8: space.exclude[0]: "dp" is not an axis of the space (tp)`,
				`c/scenarios/eagle3.yaml:9:12: space.exclude[1].tp: 8 is not one of the axis's values (2, 4)`,
			}},
		{"every point excluded, by what", space("  args: {tp: [2, 4], dp: [1, 2]}\n  constraints: [tp > 2]\n  exclude: [{dp: [1, 2]}]\n"),
			[]string{`c/scenarios/eagle3.yaml:5:1: space: eagle3 keeps no point of its 4 combinations: space.constraints[0] (line 7) drops 2, space.exclude[0] (line 8) drops 2`}},
		{"a space too large to launch",
			space("  args:\n" + "    a: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n    b: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n    c: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n    d: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n"),
			[]string{`c/scenarios/eagle3.yaml:5:1: space: eagle3 expands to 10,000 points, more than the 256 one space may launch (each point is a launch in every round); add constraints or use a coarser grid`}},
		{"a space too large after constraints",
			space("  args:\n    a: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n    b: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n    c: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n  constraints: [a < b]\n"),
			[]string{`c/scenarios/eagle3.yaml:5:1: space: eagle3 expands to 450 points (of 1,000 combinations), more than the 256 one space may launch (each point is a launch in every round); add constraints or use a coarser grid`}},
		{"a grid too large to look at",
			space("  args:\n" + strings.Repeat("", 0) +
				"    a: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n    b: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n    c: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n" +
				"    d: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n    e: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n    f: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n  constraints: [a < b]\n"),
			[]string{`c/scenarios/eagle3.yaml:5:1: space: eagle3 has 1,000,000 combinations (10 a × 10 b × 10 c × 10 d × 10 e × 10 f), more than the 100,000 a space is checked over; use a coarser grid`}},
		{"point names too long", space("  args:\n    tp: {values: [2], label: " + strings.Repeat("t", 95) + "}\n"),
			[]string{`c/scenarios/eagle3.yaml:5:1: space: eagle3's point eagle3.` + strings.Repeat("t", 95) + `2 has a name of 103 characters, more than 100; give the axes shorter labels ({values: [...], label: ...})`}},
		{"a reserved flag as an axis", space("  args:\n    port: [1, 2]\n"),
			[]string{
				`c/scenarios/eagle3.yaml:7:12: args: port is set by bakeoff from engine.port; remove it`,
				`c/scenarios/eagle3.yaml:7:15: args: port is set by bakeoff from engine.port; remove it`,
			}},
		{"a base that does not check is reported once", withSpace("name: eagle3\nspace:\n  args:\n    tp: [1, 2]\n"),
			[]string{"c/scenarios/eagle3.yaml:1:1: scenario eagle3: no model (set `model` here or in a parent)"}},
		{"a role that sets an axis", withSpace(eagleHead + "deployment:\n  roles:\n    server:\n      args: {tp: 8}\nspace:\n  args:\n    tp: [2, 4]\n"),
			[]string{`c/scenarios/eagle3.yaml:8:14: deployment.roles.server.args.tp: an axis of the space (line 11); the role's value would replace each point's`}},
		{"baseline names a space", withSpace(eagleHead + "space:\n  args: {tp: [2, 4]}\n").with(memFiles{
			cfgPath: strings.Replace(strings.Replace(goodFiles[cfgPath], "[base, spec]", "[base, eagle3]", 1), "baseline: base", "baseline: eagle3", 1)}),
			[]string{`c/configs/camp.yaml:7:11: baseline: "eagle3" is a space of 2 points, not one scenario; name one of the points (eagle3.tp2, eagle3.tp4) or another scenario`}},
		{"no baseline and a space first", withSpace(eagleHead + "space:\n  args: {tp: [2, 4, 8, 16]}\n").with(memFiles{
			cfgPath: strings.Replace(strings.Replace(goodFiles[cfgPath], "[base, spec]", "[eagle3, base]", 1), "baseline: base\n", "", 1)}),
			[]string{`c/configs/camp.yaml:1:1: baseline: missing, and the first scenario, eagle3, is a space of 4 points; name the baseline: a scenario, or one of the points (eagle3.tp2, eagle3.tp4, eagle3.tp8, …)`}},
		{"a point named like a listed scenario", withSpace(eagleHead + "space:\n  args: {tp: {values: [2], label: \"\"}}\n").with(memFiles{
			cfgPath:                   strings.Replace(goodFiles[cfgPath], "[base, spec]", "[base, eagle3, eagle3.2.yaml]", 1),
			"c/configs/eagle3.2.yaml": "name: eagle3.2\nextends: ../scenarios/base.yaml\n"}),
			[]string{`c/configs/camp.yaml:8:27: scenarios[2]: duplicate scenario name "eagle3.2" (first at line 8)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := loadMem(t, tt.files)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(tt.want, "\n      "))
			}
		})
	}
}

// TestSpaceLoadsLikeWritten: a point goes through the loading path of a
// scenario written by hand: the same command line, the same engine
// warnings at the place the value is written, the same flag positions for
// the preflight.
func TestSpaceLoadsLikeWritten(t *testing.T) {
	files := withSpace(eagleHead + `space:
  args:
    speculative-num-steps: [3]
    speculative-eagle-topk: [1]
    speculative-num-draft-tokens: [4, 8]
`).with(memFiles{
		cfgPath: strings.Replace(goodFiles[cfgPath], "[base, spec]", "[base, spec, eagle3]", 1),
	})
	c, errs := loadMem(t, files)
	if errs != nil {
		t.Fatalf("errors:\n%s", strings.Join(errs, "\n"))
	}
	byName := map[string]*Scenario{}
	for _, s := range c.Scenarios {
		byName[s.Name] = s
	}
	spec, point := byName["spec"], byName["eagle3.steps3.topk1.tokens4"]
	if spec == nil || point == nil {
		t.Fatalf("scenarios %q", scenarioNames(c))
	}
	for _, s := range []*Scenario{spec, point} {
		if s.Engine != DefaultEngine || !s.Speculative() {
			t.Errorf("%s: engine %q, speculative %t", s.Name, s.Engine, s.Speculative())
		}
	}
	a, err := Render(c, spec, On{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Render(c, point, On{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Command != b.Command || !slices.Equal(a.FlagKeys, b.FlagKeys) {
		t.Errorf("the point renders\n  %s\nthe scenario written by hand\n  %s", b.Command, a.Command)
	}
	// SGLang forces draft tokens to steps + 1 at topk 1: the warning on
	// the point of 8 is at the value 8, as it is at the arg of a scenario
	// written so.
	want := "c/scenarios/eagle3.yaml:9:39: scenario eagle3.steps3.topk1.tokens8: "
	found := false
	for _, w := range c.Warnings {
		found = found || strings.HasPrefix(w, want) && strings.Contains(w, "speculative-num-draft-tokens")
	}
	if !found {
		t.Errorf("no warning %q…; warnings:\n%s", want, strings.Join(c.Warnings, "\n"))
	}
	if got := byName["eagle3.steps3.topk1.tokens8"].ArgAt("speculative-num-draft-tokens"); got != "c/scenarios/eagle3.yaml:9:39" {
		t.Errorf("the preflight would name %s", got)
	}
	order := LaunchOrder(scenarioNames(c), 2)
	if want := []string{"eagle3.steps3.topk1.tokens8", "eagle3.steps3.topk1.tokens4", "spec", "base"}; !slices.Equal(order[1], want) {
		t.Errorf("round 2 launches %q, want %q", order[1], want)
	}
}

// TestSpaceWarnings: a rule that drops nothing is warned about, and an
// engine warning every point shares is said once for the space.
func TestSpaceWarnings(t *testing.T) {
	c, errs := loadMem(t, withSpace(eagleHead+`space:
  args:
    speculative-eagle-topk: [2, 4]
  env:
    SGLANG_ENABLE_SPEC_V2: ["1"]
  constraints:
    - speculative_eagle_topk > 1
  exclude:
    - {speculative-eagle-topk: 8}
`))
	if errs == nil {
		t.Fatalf("an exclusion of a value not on the axis loaded")
	}
	if want := `c/scenarios/eagle3.yaml:13:32: space.exclude[0].speculative-eagle-topk: 8 is not one of the axis's values (2, 4)`; !slices.Equal(errs, []string{want}) {
		t.Fatalf("errors %q", errs)
	}
	c, errs = loadMem(t, withSpace(eagleHead+`space:
  args:
    speculative-eagle-topk: [2, 4]
  env:
    SGLANG_ENABLE_SPEC_V2: ["1"]
  constraints:
    - speculative_eagle_topk > 1
`))
	if errs != nil {
		t.Fatalf("errors:\n%s", strings.Join(errs, "\n"))
	}
	var mine []string
	for _, w := range c.Warnings {
		if strings.HasPrefix(w, eaglePath) {
			mine = append(mine, w)
		}
	}
	want := []string{
		`c/scenarios/eagle3.yaml:9:29: scenario eagle3.topk2.v2-1 and 1 other point of eagle3: SGLANG_ENABLE_SPEC_V2=1 does nothing`,
		`c/scenarios/eagle3.yaml:11:7: space.constraints[0]: drops nothing in eagle3: no combination the rules before it keep is dropped by it`,
	}
	if len(mine) != len(want) {
		t.Fatalf("warnings:\n%s", strings.Join(mine, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(mine[i], want[i]) {
			t.Errorf("warning %d:\n got %s\nwant %s…", i, mine[i], want[i])
		}
	}
}

// TestSpaceLimitIsCheap: a grid far beyond what can be launched is refused
// at once, before a combination is looked at.
func TestSpaceLimitIsCheap(t *testing.T) {
	axes := ""
	for _, a := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		axes += "    " + a + ": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n"
	}
	start := time.Now()
	_, errs := loadMem(t, withSpace(eagleHead+"space:\n  args:\n"+axes+"  constraints: [a < b]\n"))
	if len(errs) != 1 || !strings.Contains(errs[0], "has 1e+12 combinations") {
		t.Errorf("errors %q", errs)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing took %s", d)
	}
}

func TestSpaceNaming(t *testing.T) {
	tests := []struct {
		label, text string
		val         any
		want        string
	}{
		{"steps", "3", 3, "steps3"},
		{"v2", "1", "1", "v2-1"},
		{"backend", "fa3", "fa3", "backend-fa3"},
		{"sync", "true", true, "sync-on"},
		{"sync", "false", false, "sync-off"},
		{"", "EAGLE3", "EAGLE3", "EAGLE3"},
		{"mem", "0.85", 0.85, "mem0.85"},
		{"x", "-1", -1, "x--1"},
		{"path", "/data/m 1", "/data/m 1", "path-_data_m_1"},
		{"v", "", "", "v-empty"},
	}
	for _, tt := range tests {
		if got := valuePart(tt.label, tt.val, tt.text); got != tt.want {
			t.Errorf("valuePart(%q, %q) = %q, want %q", tt.label, tt.text, got, tt.want)
		}
	}
	idents := map[string]string{
		"speculative-num-steps":    "speculative_num_steps",
		"SGLANG_ENABLE_SPEC_V2":    "SGLANG_ENABLE_SPEC_V2",
		"compilation-config.level": "compilation_config_level",
		"2nd-flag":                 "_2nd_flag",
	}
	for name, want := range idents {
		if got := spaceIdent(name); got != want {
			t.Errorf("spaceIdent(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestSpaceRemoved: a child's space: null leaves it one scenario, the
// parent's flags as they are and its own over them.
func TestSpaceRemoved(t *testing.T) {
	files := withSpace(eagleHead + "space:\n  args:\n    speculative-eagle-topk: [1, 4]\n").with(memFiles{
		cfgPath:                         strings.Replace(goodFiles[cfgPath], "[base, spec]", "[base, eagle3, eagle3-topk2]", 1),
		"c/scenarios/eagle3-topk2.yaml": "extends: eagle3\nargs:\n  speculative-eagle-topk: 2\nspace: null\n",
	})
	c, errs := loadMem(t, files)
	if errs != nil {
		t.Fatalf("errors:\n%s", strings.Join(errs, "\n"))
	}
	if got, want := scenarioNames(c), []string{"base", "eagle3.topk1", "eagle3.topk4", "eagle3-topk2"}; !slices.Equal(got, want) {
		t.Fatalf("scenarios %q, want %q", got, want)
	}
	if v, _ := c.Scenarios[3].ArgValue("speculative-eagle-topk"); v != "2" || len(c.Spaces) != 1 {
		t.Errorf("topk %q, %d spaces", v, len(c.Spaces))
	}
}

// TestSpacePointRef lists single points of a space by name, as a campaign
// that checks a serving policy against the configurations it switches
// between does: only those points are the campaign's, and a name that is
// no point is an error at the list entry naming the points there are.
func TestSpacePointRef(t *testing.T) {
	eagle := eagleHead + "space:\n  args:\n    speculative-num-steps: [1, 2, 3]\n"
	list := func(names string) memFiles {
		f := withSpace(eagle)
		f[cfgPath] = strings.Replace(f[cfgPath], "[base, eagle3]", names, 1)
		return f
	}
	c, errs := loadMem(t, list("[base, eagle3.steps3, eagle3.steps1]"))
	if errs != nil {
		t.Fatalf("errors:\n%s", strings.Join(errs, "\n"))
	}
	if got := scenarioNames(c); !slices.Equal(got, []string{"base", "eagle3.steps3", "eagle3.steps1"}) {
		t.Errorf("scenarios %v", got)
	}
	if v, _ := c.Scenarios[1].ArgValue("speculative-num-steps"); v != "3" {
		t.Errorf("eagle3.steps3 runs %q steps", v)
	}
	if len(c.Spaces) != 0 {
		t.Errorf("a point listed alone shows its space: %+v", c.Spaces)
	}
	// A file of the dotted name is that file, not a point.
	f := list("[base, eagle3.steps3]")
	f["c/scenarios/eagle3.steps3.yaml"] = "name: eagle3.steps3\nextends: base\nargs:\n  speculative-num-steps: 7\n"
	c, errs = loadMem(t, f)
	if errs != nil {
		t.Fatalf("errors:\n%s", strings.Join(errs, "\n"))
	}
	if v, _ := c.Scenarios[1].ArgValue("speculative-num-steps"); v != "7" {
		t.Errorf("the file eagle3.steps3.yaml was not read: %q steps", v)
	}
	for _, tc := range []struct{ names, want string }{
		{"[base, eagle3.steps9]", "c/configs/camp.yaml:8:19: scenarios[1]: eagle3.steps9 is not a point of eagle3's space, whose 3 points are eagle3.steps1, eagle3.steps2, eagle3.steps3"},
		{"[base, base.steps1]", "c/configs/camp.yaml:8:19: scenarios[1]: base.steps1 names no scenario file, and base has no space: whose point it could be"},
		{"[base, nothing.steps1]", `c/configs/camp.yaml:8:19: unknown scenario "nothing.steps1": c/scenarios/nothing.steps1.yaml does not exist`},
	} {
		_, errs := loadMem(t, list(tc.names))
		if len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), tc.want) {
			t.Errorf("%s: errors\n%s\nwant %s", tc.names, strings.Join(errs, "\n"), tc.want)
		}
	}
}
