package loadgen

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/prompts"
)

// fullSpec returns a Spec with every field set to a value that is neither
// zero nor the command line's default, so a field Argv leaves out or
// ParseArgv does not read comes back different. A field of a type the test
// has no value for fails it: a new kind of setting needs one here.
func fullSpec(t *testing.T) Spec {
	t.Helper()
	syn, err := prompts.ParseSynthetic("count=100 input=normal(mean=800,sd=200,min=100,max=2000) output=uniform(min=32,max=256)")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := prompts.ParseSessions("turns=uniform(min=2,max=5) think_ms=normal(mean=1500,sd=500,min=200,max=4000) first=800 follow_up=prompts")
	if err != nil {
		t.Fatal(err)
	}
	// Values that must be valid rather than merely set.
	special := map[string]any{
		"URL":                   "http://10.0.0.7:8000",
		"MetricsURL":            "http://10.0.0.7:8001",
		"Engine":                "vllm",
		"Endpoint":              EndpointCompletions,
		"Prompts.OutputLengths": prompts.OutputRecorded,
		"Prompts.Synthetic":     &syn,
		"Sessions":              &sess,
	}
	var s Spec
	var fill func(v reflect.Value, path string)
	fill = func(v reflect.Value, path string) {
		if x, ok := special[path]; ok {
			v.Set(reflect.ValueOf(x))
			return
		}
		switch {
		case v.Type() == reflect.TypeFor[time.Duration]():
			v.SetInt(int64(7 * time.Second))
		case v.Kind() == reflect.Struct:
			for i := range v.NumField() {
				f := v.Type().Field(i)
				fill(v.Field(i), strings.TrimPrefix(path+"."+f.Name, "."))
			}
		case v.Kind() == reflect.String:
			v.SetString("x-" + path)
		case v.Kind() == reflect.Bool:
			v.SetBool(true)
		case v.Kind() == reflect.Int, v.Kind() == reflect.Int64:
			v.SetInt(7)
		case v.Kind() == reflect.Float64:
			v.SetFloat(0.7)
		case v.Type() == reflect.TypeFor[[]int]():
			v.Set(reflect.ValueOf([]int{3, 7}))
		case v.Type() == reflect.TypeFor[[]float64]():
			v.Set(reflect.ValueOf([]float64{0.5, 2.5}))
		default:
			t.Fatalf("Spec.%s: no test value for a %s; add one so the round trip covers it", path, v.Type())
		}
	}
	fill(reflect.ValueOf(&s).Elem(), "")
	return s
}

// TestSpecArgvRoundTrip: every field of a Spec survives Argv and ParseArgv,
// in a closed loop and an open one (the two level lists exclude each other).
// A field added to Spec without its flag fails here.
func TestSpecArgvRoundTrip(t *testing.T) {
	full := fullSpec(t)
	closed, open, replay := full, full, full
	closed.Rates, open.Concurrency = nil, nil
	replay.Concurrency, replay.Rates = nil, nil
	for _, s := range []*Spec{&closed, &open} {
		s.Speeds, s.Trace, s.BlockSize = nil, "", 0
	}
	// A number of requests and a multiple of the auto count exclude each
	// other too: the closed loop takes the multiple.
	closed.Requests = 0
	open.AutoScale, replay.AutoScale = 0, 0
	for name, want := range map[string]Spec{"closed": closed, "open": open, "replay": replay} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseArgv(nil, want.Argv())
			if err != nil {
				t.Fatalf("ParseArgv(%q): %v", want.Argv(), err)
			}
			if !reflect.DeepEqual(got, want) {
				gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
				for i := range wv.NumField() {
					if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
						t.Errorf("%s: got %+v, want %+v", wv.Type().Field(i).Name, gv.Field(i).Interface(), wv.Field(i).Interface())
					}
				}
				t.Logf("argv: %q", want.Argv())
			}
		})
	}
}

// TestSpecDefaults: an empty command line (but for the URL) is the sweep
// the usage text promises, and a Spec's zero values write a command line
// that reads back as the same sweep.
func TestSpecDefaults(t *testing.T) {
	got, err := ParseArgv(nil, []string{"--url", "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{URL: "http://127.0.0.1:1", Engine: "generic", Endpoint: EndpointChat,
		Concurrency: []int{1, 2, 5, 10, 30, 70, 100, 250}, Burstiness: DefaultBurstiness, MaxInFlight: DefaultMaxInFlight,
		MaxTokens: DefaultMaxTokens, Warmup: DefaultSweepWarmup, Repeats: 1, RequestTimeout: DefaultRequestTimeout, ScrapeInterval: DefaultScrapeInterval,
		Prompts: prompts.Spec{File: prompts.Builtin}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", got, want)
	}
	zero := Spec{URL: "http://127.0.0.1:1", Concurrency: []int{4}}
	back, err := ParseArgv(nil, zero.Argv())
	if err != nil {
		t.Fatalf("%q: %v", zero.Argv(), err)
	}
	a, err := zero.Options()
	if err != nil {
		t.Fatal(err)
	}
	b, err := back.Options()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []*Options{&a, &b} {
		if err := o.check(); err != nil {
			t.Fatal(err)
		}
	}
	if a.Prompts.Hash != b.Prompts.Hash {
		t.Errorf("prompt sets %s and %s", a.Prompts.Hash, b.Prompts.Hash)
	}
	a.Prompts, b.Prompts = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Errorf("zero Spec and its round trip run differently:\n%+v\n%+v", a, b)
	}
}

// TestSpecOptions: every setting of a Spec reaches the Options of the same
// name, but for what only the command has (where it writes, the key's
// variable).
func TestSpecOptions(t *testing.T) {
	s := fullSpec(t)
	s.Rates = nil
	s.Prompts = prompts.Spec{File: prompts.Builtin, OutputLengths: prompts.OutputRecorded}
	s.Trace = filepath.Join(t.TempDir(), "trace.jsonl")
	s.BlockSize = 4
	if err := os.WriteFile(s.Trace, []byte(`{"timestamp": 0, "input_length": 7, "output_length": 3, "hash_ids": [1, 2]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := s.Options()
	if err != nil {
		t.Fatal(err)
	}
	commandOnly := []string{"APIKeyEnv", "Out", "Levels", "JSON"}
	if o.Trace == nil || o.Trace.BlockSize != s.BlockSize {
		t.Errorf("the trace and its block size do not reach Options: %+v", o.Trace)
	}
	commandOnly = append(commandOnly, "BlockSize") // in Options.Trace
	sv, ov := reflect.ValueOf(s), reflect.ValueOf(o)
	for i := range sv.NumField() {
		name := sv.Type().Field(i).Name
		if slices.Contains(commandOnly, name) || sv.Field(i).IsZero() {
			continue
		}
		f := ov.FieldByName(name)
		if !f.IsValid() || f.IsZero() {
			t.Errorf("Spec.%s does not reach Options", name)
			continue
		}
		if f.Type() == sv.Field(i).Type() && !reflect.DeepEqual(f.Interface(), sv.Field(i).Interface()) {
			t.Errorf("Options.%s = %v, want %v", name, f.Interface(), sv.Field(i).Interface())
		}
	}
	if o.Engine.Name != "vllm" || len(o.Prompts.Prompts) == 0 {
		t.Errorf("engine %q, %d prompts", o.Engine.Name, len(o.Prompts.Prompts))
	}
}
