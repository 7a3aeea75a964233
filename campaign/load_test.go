package campaign

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/engine"
)

func loadMem(t *testing.T, files memFiles) (*Campaign, []string) {
	t.Helper()
	c, err := load(cfgPath, files.read)
	if err == nil {
		return c, nil
	}
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("load returned %T, want *Errors: %v", err, err)
	}
	var out []string
	for _, e := range errs.List {
		out = append(out, e.Error())
	}
	return nil, out
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files memFiles
		want  []string
	}{
		{"unknown campaign key", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "max_tokens: 50", "max_tokenz: 50", 1)},
			[]string{`c/configs/camp.yaml:6:3: sweep: unknown key "max_tokenz" (known: burstiness, concurrency, endpoint, ignore_eos, max_tokens, percentiles, prompts, rates, repeats, request_timeout, requests, scrape_interval, seed, speeds, temperature, trace, unique_prompts, warmup, workload)`}},
		{"unknown scenario key", memFiles{basePath: "name: base\nmodel: /m\nflags: {tp: 2}\n"},
			[]string{`c/scenarios/base.yaml:3:1: scenario: unknown key "flags" (known: args, deployment, description, engine, env, extends, gpus, launch, model, name, prefix_cache, space)`}},
		{"duplicate key", memFiles{basePath: "name: base\nmodel: /m\nmodel: /n\n"},
			[]string{`c/scenarios/base.yaml:3:1: scenario: duplicate key "model" (first at line 2)`}},
		{"duplicate scenario listed twice", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "[base, spec]", "[base, spec, base]", 1)},
			[]string{`c/configs/camp.yaml:8:25: scenarios[2]: duplicate scenario name "base" (first at line 8)`}},
		{"duplicate scenario name from two files", memFiles{specPath: "name: base\nextends: base\n"},
			[]string{`c/configs/camp.yaml:8:19: scenarios[1]: duplicate scenario name "base" (first at line 8)`}},
		{"extends unknown", memFiles{specPath: "extends: nosuch\n"},
			[]string{`c/scenarios/spec.yaml:1:10: unknown parent scenario "nosuch": c/scenarios/nosuch.yaml does not exist`}},
		{"extends cycle", memFiles{basePath: "extends: spec\nmodel: /m\n", specPath: "extends: base\n"},
			[]string{`c/scenarios/spec.yaml:1:10: extends forms a cycle: c/scenarios/base.yaml → c/scenarios/spec.yaml → c/scenarios/base.yaml`}},
		{"extends itself", memFiles{specPath: "extends: spec\n"},
			[]string{`c/scenarios/spec.yaml:1:10: extends forms a cycle: c/scenarios/spec.yaml → c/scenarios/spec.yaml`}},
		{"unknown scenario in campaign", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "[base, spec]", "[base, nope]", 1)},
			[]string{`c/configs/camp.yaml:8:19: unknown scenario "nope": c/scenarios/nope.yaml does not exist`}},
		{"baseline not among scenarios", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "baseline: base", "baseline: other", 1)},
			[]string{`c/configs/camp.yaml:7:11: baseline: "other" is not among the scenarios (base, spec)`}},
		{"empty concurrency", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "[1, 8]", "[]", 1)},
			[]string{`c/configs/camp.yaml:5:16: sweep.concurrency: empty list (at least one level)`}},
		{"non-positive and repeated levels", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "[1, 8]", "[1, 0, -2, 8, 1]", 1)},
			[]string{
				`c/configs/camp.yaml:5:20: sweep.concurrency[1]: level 0: must be at least 1`,
				`c/configs/camp.yaml:5:23: sweep.concurrency[2]: level -2: must be at least 1`,
				`c/configs/camp.yaml:5:30: sweep.concurrency[4]: level 1 repeated (first at line 5)`,
			}},
		{"concurrency not a list", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "[1, 8]", "8", 1)},
			[]string{`c/configs/camp.yaml:5:16: sweep.concurrency: want a list of levels, got "8"`}},
		{"concurrency missing", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "  concurrency: [1, 8]\n", "", 1)},
			[]string{`c/configs/camp.yaml:5:3: sweep.concurrency: missing (the levels to run, e.g. [1, 2, 5, 10], or sweep.rates in requests per second)`}},
		{"both concurrency and rates", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "max_tokens: 50", "max_tokens: 50\n  rates: [1, 2]", 1)},
			[]string{`c/configs/camp.yaml:7:10: sweep.rates: give either sweep.concurrency (a closed loop) or sweep.rates (open-loop arrivals), not both`}},
		{"bad rates", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "concurrency: [1, 8]", "rates: [0.5, 0, -1, 0.0001, 0.5, x]", 1)},
			[]string{
				`c/configs/camp.yaml:5:16: sweep.rates[1]: rate 0: must be more than 0 requests per second`,
				`c/configs/camp.yaml:5:19: sweep.rates[2]: rate -1: must be more than 0 requests per second`,
				`c/configs/camp.yaml:5:23: sweep.rates[3]: rate 0.0001: at most three decimals (steps of 0.001 requests per second)`,
				`c/configs/camp.yaml:5:31: sweep.rates[4]: rate 0.5 repeated (first at line 5)`,
				`c/configs/camp.yaml:5:36: sweep.rates[5]: want a number, got "x"`,
			}},
		{"rates not a list", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "concurrency: [1, 8]", "rates: 4", 1)},
			[]string{`c/configs/camp.yaml:5:10: sweep.rates: want a list of rates in requests per second, got "4"`}},
		{"burstiness without rates", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "max_tokens: 50", "max_tokens: 50\n  burstiness: 2", 1)},
			[]string{`c/configs/camp.yaml:7:15: sweep.burstiness: shapes the arrivals of sweep.rates; a concurrency sweep has none`}},
		{"burstiness zero", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "concurrency: [1, 8]", "rates: [1]\n  burstiness: 0", 1)},
			[]string{`c/configs/camp.yaml:6:15: sweep.burstiness: 0: want more than 0 and at most 10000 (1 is Poisson; below 1 bursts, above 1 more even)`}},
		{"max_tokens zero", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "max_tokens: 50", "max_tokens: 0", 1)},
			[]string{`c/configs/camp.yaml:6:15: sweep.max_tokens: must be at least 1, got 0`}},
		{"requests zero and word", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "max_tokens: 50", "max_tokens: 50\n  requests: -3", 1)},
			[]string{`c/configs/camp.yaml:7:13: sweep.requests: must be at least 1 (or auto), got -3`}},
		{"requests not a number", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "max_tokens: 50", "max_tokens: 50\n  requests: lots", 1)},
			[]string{`c/configs/camp.yaml:7:13: sweep.requests: want a number or auto, got "lots"`}},
		{"unparsable durations", memFiles{cfgPath: goodFiles[cfgPath] + "engine:\n  health_timeout: 30 minutes\n  poll_interval: 5\n  stop_grace: -1s\n"},
			[]string{
				`c/configs/camp.yaml:10:19: engine.health_timeout: unparsable duration "30 minutes" (want e.g. 200ms, 30s, 5m, 1h30m)`,
				`c/configs/camp.yaml:11:18: engine.poll_interval: unparsable duration "5" (want e.g. 200ms, 30s, 5m, 1h30m)`,
				`c/configs/camp.yaml:12:15: engine.stop_grace: must not be negative`,
			}},
		{"zero timeout", memFiles{cfgPath: goodFiles[cfgPath] + "gpu:\n  wait_timeout: 0s\n"},
			[]string{`c/configs/camp.yaml:10:17: gpu.wait_timeout: must be longer than 0, got 0s`}},
		{"port out of range", memFiles{cfgPath: goodFiles[cfgPath] + "engine:\n  port: 70000\n"},
			[]string{`c/configs/camp.yaml:10:9: engine.port: 70000 is out of range (1-65535)`}},
		{"port zero", memFiles{cfgPath: goodFiles[cfgPath] + "engine:\n  port: 0\n"},
			[]string{`c/configs/camp.yaml:10:9: engine.port: 0 is out of range (1-65535)`}},
		{"invalid env names", memFiles{
			cfgPath:  goodFiles[cfgPath] + "engine:\n  env:\n    A-B: x\n",
			basePath: "name: base\nmodel: /m\nenv:\n  1FOO: x\n  \"SP ACE\": y\n"},
			[]string{
				`c/configs/camp.yaml:11:5: engine.env: "A-B" is not a valid environment variable name (letters, digits and '_', not starting with a digit)`,
				`c/scenarios/base.yaml:4:3: env: "1FOO" is not a valid environment variable name (letters, digits and '_', not starting with a digit)`,
				`c/scenarios/base.yaml:5:3: env: "SP ACE" is not a valid environment variable name (letters, digits and '_', not starting with a digit)`,
			}},
		{"arg keys with spaces or dashes", memFiles{basePath: "name: base\nmodel: /m\nargs:\n  --tp: 2\n  \"cuda graph\": 1\n  a=b: 1\n"},
			[]string{
				`c/scenarios/base.yaml:4:3: args: key "--tp": write it without leading dashes ("tp")`,
				`c/scenarios/base.yaml:5:3: args: key "cuda graph" contains a space`,
				`c/scenarios/base.yaml:6:3: args: key "a=b" contains '=': give the value as the key's value`,
			}},
		{"values with newline or NUL", memFiles{basePath: "name: base\nmodel: \"/m\\n\"\nargs:\n  a: \"x\\0y\"\n  b: [ok, \"l1\\nl2\"]\nenv:\n  E: \"v\\r\"\n"},
			[]string{
				`c/scenarios/base.yaml:2:8: model: contains a newline`,
				`c/scenarios/base.yaml:4:6: args.a: contains a NUL byte`,
				`c/scenarios/base.yaml:5:11: args.b[1]: contains a newline`,
				`c/scenarios/base.yaml:7:6: env.E: contains a newline`,
			}},
		{"arg value a mapping", memFiles{basePath: "name: base\nmodel: /m\nargs:\n  speculative-config: {method: eagle3}\n"},
			[]string{`c/scenarios/base.yaml:4:23: args.speculative-config: want a value or a list of values, got a mapping (write JSON as a quoted string)`}},
		{"yaml syntax error", memFiles{basePath: "name: base\nmodel: [unclosed\n"},
			[]string{`c/scenarios/base.yaml:2: YAML syntax: did not find expected ',' or ']'`}},
		{"yaml scanner error", memFiles{basePath: "name: base\nmodel: /m\n  args: 3\n"},
			[]string{`c/scenarios/base.yaml:3: YAML syntax: mapping values are not allowed in this context`}},
		{"yaml block error", memFiles{basePath: "name: base\n- model\n"},
			[]string{`c/scenarios/base.yaml:2: YAML syntax: did not find expected key`}},
		{"raw control character", memFiles{basePath: "name: base\nmodel: /m\nargs:\n  tp: ä\x00\n"},
			[]string{`c/scenarios/base.yaml:4:8: YAML syntax: control character U+0000 is not allowed (write it as an escape in a double-quoted string)`}},
		{"empty campaign file", memFiles{cfgPath: "# nothing\n"},
			[]string{`c/configs/camp.yaml: empty file`}},
		{"two documents", memFiles{basePath: "name: base\nmodel: /m\n---\nname: x\n"},
			[]string{`c/scenarios/base.yaml:3:1: a second YAML document: a file holds exactly one`}},
		{"missing campaign parts", memFiles{cfgPath: "# only a baseline\n\nbaseline: base\n"},
			[]string{
				`c/configs/camp.yaml:3:1: campaign: missing (the campaign's name)`,
				`c/configs/camp.yaml:3:1: host: missing (` + "`local`" + `, or a mapping with ssh:)`,
				`c/configs/camp.yaml:3:1: sweep: missing (at least sweep.concurrency or sweep.rates)`,
				`c/configs/camp.yaml:3:1: scenarios: missing (the list of scenarios to compare)`,
			}},
		{"no model", memFiles{basePath: "name: base\nargs: {tp: 2}\n"},
			[]string{
				`c/scenarios/base.yaml:1:1: scenario base: no model (set ` + "`model`" + ` here or in a parent)`,
				`c/scenarios/spec.yaml:1:1: scenario spec: no model (set ` + "`model`" + ` here or in a parent)`,
			}},
		{"generic without launch", memFiles{specPath: "extends: base\nengine: generic\n"},
			[]string{`c/scenarios/spec.yaml:1:1: scenario spec: engine generic needs a launch command (` + "`launch:`" + `)`}},
		{"unknown engine", memFiles{specPath: "extends: base\nengine: tgi\n"},
			[]string{`c/scenarios/spec.yaml:2:9: engine: unknown engine "tgi" (want generic, llamacpp, sglang, trtllm or vllm)`}},
		{"reserved arg", memFiles{specPath: "extends: base\nargs:\n  port: 1234\n  model-path: /x\n"},
			[]string{
				`c/scenarios/spec.yaml:3:3: args: port is set by bakeoff from engine.port; remove it`,
				`c/scenarios/spec.yaml:4:3: args: model-path is set by bakeoff from model; remove it`,
			}},
		{"host not local", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "host:\n  ssh: gpu\n", "host: gpu\n", 1)},
			[]string{`c/configs/camp.yaml:2:7: host: want ` + "`local`" + ` or a mapping (host: {ssh: gpu})`}},
		{"host mapping problems", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "  ssh: gpu\n", "  workdir: data/x\n  sweep_mode: ssh\n", 1)},
			[]string{
				`c/configs/camp.yaml:3:3: host: ssh: missing (an alias from ~/.ssh/config or user@host:port; or write host: local)`,
				`c/configs/camp.yaml:3:12: host.workdir: "data/x" must be an absolute path`,
				`c/configs/camp.yaml:4:15: host.sweep_mode: "ssh": want host or tunnel`,
			}},
		{"ssh port", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "ssh: gpu", "ssh: root@10.0.0.1:99999", 1)},
			[]string{`c/configs/camp.yaml:3:8: host.ssh: "root@10.0.0.1:99999": port "99999" is not 1-65535`}},
		{"ssh option injection", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "ssh: gpu", "ssh: -oProxyCommand=x", 1)},
			[]string{`c/configs/camp.yaml:3:8: host.ssh: "-oProxyCommand=x" starts with '-'`}},
		{"sweep values", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "max_tokens: 50", "max_tokens: 50\n  endpoint: generate\n  temperature: -1\n  repeats: 0\n  warmup: -1\n  ignore_eos: maybe", 1)},
			[]string{
				`c/configs/camp.yaml:7:13: sweep.endpoint: "generate": want chat or completions`,
				`c/configs/camp.yaml:8:16: sweep.temperature: must not be negative`,
				`c/configs/camp.yaml:9:12: sweep.repeats: must be at least 1, got 0`,
				`c/configs/camp.yaml:10:11: sweep.warmup: must not be negative, got -1`,
				`c/configs/camp.yaml:11:15: sweep.ignore_eos: want true or false, got "maybe"`,
			}},
		{"prompts file missing", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "max_tokens: 50", "max_tokens: 50\n  prompts: p.jsonl", 1)},
			[]string{`c/configs/camp.yaml:7:12: sweep.prompts: c/configs/p.jsonl does not exist (use ` + "`builtin`" + ` or a JSONL file)`}},
		{"prompts file malformed", memFiles{
			cfgPath:             strings.Replace(goodFiles[cfgPath], "max_tokens: 50", "max_tokens: 50\n  prompts: p.jsonl", 1),
			"c/configs/p.jsonl": "{\"text\": 1}\n"},
			[]string{`c/configs/camp.yaml:7:12: sweep.prompts: c/configs/p.jsonl:1: json: unknown field "text"`}},
		{"bad names", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "campaign: t", "campaign: a/b", 1), basePath: "name: \"my base\"\nmodel: /m\n"},
			[]string{
				`c/configs/camp.yaml:1:11: campaign: "a/b" must be letters, digits, '.', '_' or '-' (it names a results directory)`,
				`c/scenarios/base.yaml:1:7: name: "my base" must be letters, digits, '.', '_' or '-' (it names a results directory)`,
			}},
		{"command string with quotes", memFiles{cfgPath: goodFiles[cfgPath] + "engine:\n  command: python -c 'x'\n"},
			[]string{`c/configs/camp.yaml:10:12: engine.command: quotes and backslashes are not interpreted in the one-line form; write a list of words`}},
		{"empty program", memFiles{specPath: "extends: base\nlaunch: [\"\", x]\n", cfgPath: goodFiles[cfgPath] + "engine:\n  command: [A=1, x]\n"},
			[]string{
				`c/configs/camp.yaml:10:13: engine.command: the program "A=1" contains '='`,
				`c/scenarios/spec.yaml:2:10: launch: the first word (the program) is empty`,
			}},
		{"merge keys refused", memFiles{cfgPath: goodFiles[cfgPath] + "gpu:\n  <<: {kill_strays: true}\n"},
			[]string{`c/configs/camp.yaml:10:3: gpu: merge keys (<<) are not supported`}},
		{"wrong types", memFiles{cfgPath: goodFiles[cfgPath] + "gpu:\n  max_used_mib: lots\n  kill_strays: [true]\nengine: [1]\n"},
			[]string{
				`c/configs/camp.yaml:10:17: gpu.max_used_mib: want an integer, got "lots"`,
				`c/configs/camp.yaml:11:16: gpu.kill_strays: want true or false, got a list`,
				`c/configs/camp.yaml:12:9: engine: want a mapping, got a list`,
			}},
		// vllm/config/vllm.py refuses to start ("--per-request-spec-decode-metrics
		// requires speculative decoding to be enabled"): the baseline that
		// carries the variant's flag is refused, at the flag, before any launch.
		{"vllm per-request metrics without speculation", memFiles{
			basePath: "name: base\nengine: vllm\nmodel: /m\nenv: {VLLM_SERVER_DEV_MODE: \"1\"}\nargs:\n  max-num-seqs: 8\n  per-request-spec-decode-metrics: summary\n",
			specPath: "extends: base\nargs:\n  speculative-config: '{\"method\": \"ngram\", \"num_speculative_tokens\": 3}'\n"},
			[]string{`c/scenarios/base.yaml:7:3: scenario base: vLLM refuses to start with per-request-spec-decode-metrics and no speculative-config ("requires speculative decoding to be enabled"); leave it out of scenarios that do not speculate`}},
		{"prefix_cache not none", memFiles{specPath: "extends: base\nprefix_cache: off\n"},
			[]string{`c/scenarios/spec.yaml:2:15: prefix_cache: "off": want none, or a mapping with reset (an HTTP call, e.g. "POST /flush_cache") or reset_command`}},
		{"prefix_cache reset malformed", memFiles{cfgPath: goodFiles[cfgPath] + "engine:\n  prefix_cache: {reset: \"FLUSH cache\"}\n"},
			[]string{`c/configs/camp.yaml:10:25: engine.prefix_cache.reset: "FLUSH cache": want METHOD /path (GET, POST, PUT or DELETE; POST when left out)`}},
		{"prefix_cache both", memFiles{specPath: "extends: base\nprefix_cache:\n  reset: /flush\n  reset_command: true\n"},
			[]string{`c/scenarios/spec.yaml:3:3: prefix_cache: give reset or reset_command, not both`}},
		{"prefix_cache empty mapping", memFiles{specPath: "extends: base\nprefix_cache: {}\n"},
			[]string{`c/scenarios/spec.yaml:2:15: prefix_cache: want reset (an HTTP call, e.g. "POST /flush_cache") or reset_command`}},
		{"errors in every file are all reported", memFiles{
			cfgPath:  strings.Replace(goodFiles[cfgPath], "max_tokens: 50", "max_tokens: -1", 1),
			basePath: "name: base\nmodel: /m\nargs: {\"-x\": 1}\n",
			specPath: "extends: base\nbogus: 1\n"},
			[]string{
				`c/configs/camp.yaml:6:15: sweep.max_tokens: must be at least 1, got -1`,
				`c/scenarios/base.yaml:3:8: args: key "-x": write it without leading dashes ("x")`,
				`c/scenarios/spec.yaml:2:1: scenario: unknown key "bogus" (known: args, deployment, description, engine, env, extends, gpus, launch, model, name, prefix_cache, space)`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := loadMem(t, goodFiles.with(tt.files))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(tt.want, "\n      "))
			}
		})
	}
}

func TestLoadWarnings(t *testing.T) {
	tests := []struct {
		name  string
		files memFiles
		want  []string
	}{
		{"none for a fair campaign", nil, nil},
		{"speculative without max-running-requests above 48", memFiles{
			basePath: "name: base\nmodel: /m\n",
			cfgPath:  strings.Replace(goodFiles[cfgPath], "[1, 8]", "[1, 8, 64]", 1)},
			[]string{`c/scenarios/spec.yaml:3:3: scenario spec: speculative SGLang caps running requests at 48 unless max-running-requests is set, and the sweep goes to 64; set it (to the same value in every scenario)`}},
		{"no warning at or below 48", memFiles{
			basePath: "name: base\nmodel: /m\n",
			cfgPath:  strings.Replace(goodFiles[cfgPath], "[1, 8]", "[1, 48]", 1)},
			nil},
		// SGLang removed SGLANG_ENABLE_SPEC_V2 (speculative_hook.py): speculative
		// decoding always runs the V2 worker, topk > 1 included, so setting the
		// variable, to anything, measures nothing of its own.
		{"spec v2 with topk 4", memFiles{specPath: "extends: base\nenv: {SGLANG_ENABLE_SPEC_V2: \"1\"}\nargs:\n  speculative-algorithm: EAGLE3\n  speculative-eagle-topk: 4\n"},
			[]string{`c/scenarios/spec.yaml:2:7: scenario spec: SGLANG_ENABLE_SPEC_V2=1 does nothing on current SGLang, which removed it and always runs speculative decoding on the V2 (overlap) worker; the synchronous path is disable-overlap-schedule`}},
		{"spec v2 from the campaign env", memFiles{
			specPath: "extends: base\nargs:\n  speculative-algorithm: EAGLE3\n  speculative-eagle-topk: 2\n",
			cfgPath:  goodFiles[cfgPath] + "engine:\n  env:\n    SGLANG_ENABLE_SPEC_V2: true\n"},
			[]string{`c/configs/camp.yaml:11:5: scenario base: SGLANG_ENABLE_SPEC_V2=true does nothing on current SGLang, which removed it and always runs speculative decoding on the V2 (overlap) worker; the synchronous path is disable-overlap-schedule`,
				`c/configs/camp.yaml:11:5: scenario spec: SGLANG_ENABLE_SPEC_V2=true does nothing on current SGLang, which removed it and always runs speculative decoding on the V2 (overlap) worker; the synchronous path is disable-overlap-schedule`}},
		{"topk 4 without the variable is fine", memFiles{specPath: "extends: base\nargs:\n  speculative-algorithm: EAGLE3\n  speculative-eagle-topk: 4\n"},
			nil},
		{"topk 1 draft tokens forced", memFiles{specPath: strings.Replace(goodFiles[specPath], "draft-tokens: 4", "draft-tokens: 8", 1)},
			[]string{`c/scenarios/spec.yaml:6:3: scenario spec: with speculative-eagle-topk 1 SGLang forces speculative-num-draft-tokens to num-steps+1 = 4, not 8`}},
		{"requests below the top level", memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "max_tokens: 50", "max_tokens: 50\n  requests: 5", 1)},
			[]string{`c/configs/camp.yaml:7:13: sweep.requests: 5 requests never reach concurrency 8; use auto or at least 8`}},
		{"scenario file names itself differently", memFiles{specPath: "name: other\nextends: base\n"},
			[]string{`c/configs/camp.yaml:8:19: scenarios[1]: c/scenarios/spec.yaml names itself "other", not "spec"; results and baseline use "other"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, errs := loadMem(t, goodFiles.with(tt.files))
			if errs != nil {
				t.Fatalf("unexpected errors: %v", errs)
			}
			if !reflect.DeepEqual(c.Warnings, tt.want) {
				t.Errorf("warnings:\n got: %q\nwant: %q", c.Warnings, tt.want)
			}
		})
	}
}

func TestLoadResolves(t *testing.T) {
	files := goodFiles.with(memFiles{
		cfgPath: `campaign: t
host: local
engine:
  command: "{bakeoff} sim --sim-speed 20"
  env: {A: campaign, B: campaign}
sweep:
  concurrency: [4, 1]
scenarios: [base, ../extra/child.yaml]
`,
		basePath: `name: base
model: /m
args:
  tp: 8
  mem-fraction-static: 0.85
  enable-metrics: true
  disable-custom-all-reduce: true
  log-level: info
  ratio: 1e3
  quoted: "true"
env:
  B: base
  C: base
`,
		"c/extra/child.yaml": `extends: ../scenarios/base.yaml
description: a child by path
args:
  enable-metrics: false
  log-level: null
  tp: 4
  lora: [a, b]
env:
  C: child
`,
	})
	c, errs := loadMem(t, files)
	if errs != nil {
		t.Fatal(errs)
	}
	if !c.Host.Local || c.Host.Workdir != defaultLocalWorkdir() || c.Host.Python != "python3" || c.Host.SweepMode != "host" {
		t.Errorf("host defaults: %+v", c.Host)
	}
	wantEngine := EngineOpts{Port: 30000, HealthPath: "/health", HealthTimeout: 30 * time.Minute, PollInterval: 5 * time.Second,
		StopGrace: 30 * time.Second, Command: []string{"{bakeoff}", "sim", "--sim-speed", "20"}, Env: map[string]string{"A": "campaign", "B": "campaign"}}
	if !reflect.DeepEqual(c.Engine, wantEngine) {
		t.Errorf("engine:\n got %+v\nwant %+v", c.Engine, wantEngine)
	}
	if (c.GPU != GPUOpts{MaxUsedMiB: 1024, WaitTimeout: 5 * time.Minute}) {
		t.Errorf("gpu defaults: %+v", c.GPU)
	}
	wantSweep := Sweep{Concurrency: []int{4, 1}, MaxTokens: 200, Warmup: 5, Prompts: "builtin", OutputLengths: DefaultOutputLengths, IgnoreEOS: true,
		Endpoint: "chat", Repeats: 1, Seed: 1, RequestTimeout: 10 * time.Minute, ScrapeInterval: time.Second}
	if !reflect.DeepEqual(c.Sweep, wantSweep) {
		t.Errorf("sweep:\n got %+v\nwant %+v", c.Sweep, wantSweep)
	}
	if c.Baseline != "base" {
		t.Errorf("baseline defaults to the first scenario, got %q", c.Baseline)
	}
	if !strings.HasPrefix(c.PromptHash, "sha256:") {
		t.Errorf("prompt hash %q", c.PromptHash)
	}
	if len(c.Scenarios) != 2 {
		t.Fatalf("got %d scenarios", len(c.Scenarios))
	}
	base, child := c.Scenarios[0], c.Scenarios[1]
	wantBase := []Arg{
		{Key: "disable-custom-all-reduce", Bare: true},
		{Key: "enable-metrics", Bare: true},
		{Key: "log-level", Values: []string{"info"}},
		{Key: "mem-fraction-static", Values: []string{"0.85"}},
		{Key: "quoted", Values: []string{"true"}},
		{Key: "ratio", Values: []string{"1e3"}},
		{Key: "tp", Values: []string{"8"}},
	}
	if !reflect.DeepEqual(base.Args, wantBase) {
		t.Errorf("base args:\n got %+v\nwant %+v", base.Args, wantBase)
	}
	wantChild := []Arg{
		{Key: "disable-custom-all-reduce", Bare: true},
		{Key: "lora", Values: []string{"a", "b"}},
		{Key: "mem-fraction-static", Values: []string{"0.85"}},
		{Key: "quoted", Values: []string{"true"}},
		{Key: "ratio", Values: []string{"1e3"}},
		{Key: "tp", Values: []string{"4"}},
	}
	if !reflect.DeepEqual(child.Args, wantChild) {
		t.Errorf("child args:\n got %+v\nwant %+v", child.Args, wantChild)
	}
	if child.Name != "child" || child.Engine != "sglang" || child.Model != "/m" || child.Extends != "../scenarios/base.yaml" ||
		child.File != "c/extra/child.yaml" || child.Description != "a child by path" {
		t.Errorf("child: %+v", child)
	}
	if !reflect.DeepEqual(child.Env, map[string]string{"B": "base", "C": "child"}) {
		t.Errorf("child env %v", child.Env)
	}
	if !reflect.DeepEqual(base.Env, map[string]string{"B": "base", "C": "base"}) {
		t.Errorf("the parent changed with its child: env %v", base.Env)
	}
}

func TestScenarioHelpers(t *testing.T) {
	s := &Scenario{Args: []Arg{
		{Key: "enable-metrics", Bare: true},
		{Key: "lora", Values: []string{"a", "b"}},
		{Key: "tp", Values: []string{"8"}},
	}}
	tests := []struct {
		key, want string
		ok        bool
	}{
		{"tp", "8", true}, {"--tp", "8", true}, {"enable-metrics", "", true}, {"lora", "b", true}, {"port", "", false},
	}
	for _, tt := range tests {
		if got, ok := s.ArgValue(tt.key); got != tt.want || ok != tt.ok {
			t.Errorf("ArgValue(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
	if s.Speculative() {
		t.Error("Speculative() true without speculative-algorithm")
	}
	s.Args = append(s.Args, Arg{Key: "speculative-algorithm", Values: []string{"EAGLE3"}})
	if !s.Speculative() {
		t.Error("Speculative() false with speculative-algorithm")
	}
	v := &Scenario{Engine: engine.VLLM, Args: []Arg{{Key: "speculative-config", Values: []string{`{"method":"eagle3"}`}}}}
	if !v.Speculative() {
		t.Error("Speculative() false with a vLLM speculative-config")
	}
	// A flag means what its engine says: speculative-config is no SGLang flag.
	v.Engine = engine.SGLang
	if v.Speculative() {
		t.Error("Speculative() true for SGLang with vLLM's speculative-config")
	}
}

func TestLoadScenario(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("base.yaml", goodFiles[basePath])
	s, err := LoadScenario(write("spec.yaml", goodFiles[specPath]))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "spec" || s.Engine != "sglang" || !s.Speculative() || s.Env["NCCL_PROTO"] != "LL" {
		t.Errorf("scenario: %+v", s)
	}
	_, err = LoadScenario(write("bad.yaml", "extends: base\nargs: {port: 1}\n"))
	var errs *Errors
	if !errors.As(err, &errs) || len(errs.List) != 1 || !strings.Contains(errs.Error(), "bad.yaml:2:8: args: port is set by bakeoff") {
		t.Errorf("got %v", err)
	}
}

// TestShippedFiles loads the repository's own SGLang configs: they must load
// without errors or warnings, with the seeds' scenarios (the demo adds the
// baseline with one flag flipped). cmd/bakeoff's validate test covers every
// config in configs/.
func TestShippedFiles(t *testing.T) {
	seeds := []string{"baseline", "eagle3-topk4", "eagle3-topk1-specv2"}
	for _, tt := range []struct {
		cfg  string
		want []string
	}{
		{"../configs/rtx6000-kimi.yaml", seeds},
		{"../configs/demo.yaml", []string{"baseline", "baseline-nofusion", "eagle3-topk4", "eagle3-topk1-specv2"}},
	} {
		c, err := Load(tt.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tt.cfg, err)
		}
		if len(c.Warnings) > 0 {
			t.Errorf("%s: warnings: %q", tt.cfg, c.Warnings)
		}
		var names []string
		for _, s := range c.Scenarios {
			names = append(names, s.Name)
			if _, err := Render(c, s, On{Bakeoff: "/opt/bakeoff"}); err != nil {
				t.Errorf("%s: %v", tt.cfg, err)
			}
		}
		if !reflect.DeepEqual(names, tt.want) || c.Baseline != "baseline" {
			t.Errorf("%s: scenarios %v, baseline %q; want %v, baseline", tt.cfg, names, c.Baseline, tt.want)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{"f.yaml", 3, 5, "bad"}, "f.yaml:3:5: bad"},
		{Error{"f.yaml", 3, 0, "bad"}, "f.yaml:3: bad"},
		{Error{"f.yaml", 0, 0, "bad"}, "f.yaml: bad"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
	errs := &Errors{List: []*Error{{"a", 1, 2, "x"}, {"b", 0, 0, "y"}}}
	if got := errs.Error(); got != "a:1:2: x\nb: y" {
		t.Errorf("Errors.Error() = %q", got)
	}
}

func TestLoadPromptsFile(t *testing.T) {
	files := goodFiles.with(memFiles{
		cfgPath:             strings.Replace(goodFiles[cfgPath], "max_tokens: 50", "max_tokens: 50\n  prompts: ../p.jsonl", 1),
		"c/p.jsonl":         "{\"prompt\": \"hello\"}\n",
		"c/configs/p.jsonl": "{\"prompt\": \"a decoy beside the config\"}\n",
	})
	c, errs := loadMem(t, files)
	if errs != nil {
		t.Fatal(errs)
	}
	want, err := filepath.Abs("c/p.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if c.Sweep.Prompts != want {
		t.Errorf("prompts path %q, want %q", c.Sweep.Prompts, want)
	}
	builtin, errs := loadMem(t, goodFiles)
	if errs != nil {
		t.Fatal(errs)
	}
	if c.PromptHash == "" || c.PromptHash == builtin.PromptHash || c.Fingerprint() == builtin.Fingerprint() {
		t.Errorf("a different prompt set must change the hash and the fingerprint: %s", c.PromptHash)
	}
}
