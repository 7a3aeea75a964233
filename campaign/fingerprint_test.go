package campaign

import (
	"math"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/prompts"
)

var fpSweep = Sweep{
	Concurrency: []int{1, 2, 5}, MaxTokens: 200, Warmup: 5, Prompts: "builtin", Temperature: 0,
	IgnoreEOS: true, Endpoint: EndpointChat, Repeats: 1, Seed: 1, RequestTimeout: 10 * time.Minute,
}

const fpHash = "sha256:prompts"

// TestFingerprintPinned pins the canonical form: a change here breaks every
// comparison with earlier runs, so it must be deliberate (and bump
// fingerprintVersion). The value is sha256sum of the canonical text:
// version=bakeoff-sweep-v2, levels=1,2,5, max_tokens=200, warmup=5,
// temperature=0, ignore_eos=true, endpoint=chat, repeats=1, seed=1,
// prompts=sha256:prompts, one "key=value\n" line each.
func TestFingerprintPinned(t *testing.T) {
	const want = "sha256:1c15b8f0f782a1c59bea338fbbd1bda016a34a868b9e4195ebf7c768da4c80d3"
	if got := Fingerprint(fpSweep, fpHash); got != want {
		t.Errorf("Fingerprint = %s, want %s", got, want)
	}
}

// TestLegacyFingerprintPinned: the form runs were written with before the
// request count left the fingerprint (version=bakeoff-sweep-v1, with
// requests=30,30,30 after the levels) must not change, or those runs no
// longer resume. The value is the one this test pinned for Fingerprint then.
func TestLegacyFingerprintPinned(t *testing.T) {
	const want = "sha256:9228476afde9d54a8da6427e530532783e9495195a945e7872829db0a42e67d9"
	if got := LegacyFingerprint(fpSweep, fpHash); got != want {
		t.Errorf("LegacyFingerprint = %s, want %s", got, want)
	}
}

// TestFingerprintLeavesOutRequests: the same campaign with other request
// counts is the same comparison; other max_tokens is not. The legacy form
// still tells the counts apart, and SameSweep accepts either form.
func TestFingerprintLeavesOutRequests(t *testing.T) {
	more := fpSweep
	more.Requests = 300
	longer := fpSweep
	longer.MaxTokens = 512
	tests := []struct {
		name      string
		s         Sweep
		same, leg bool
	}{
		{"auto", fpSweep, true, true},
		{"requests 300", more, true, false},
		{"max_tokens 512", longer, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Fingerprint(tt.s, fpHash) == Fingerprint(fpSweep, fpHash); got != tt.same {
				t.Errorf("same comparison fingerprint = %v, want %v", got, tt.same)
			}
			if got := LegacyFingerprint(tt.s, fpHash) == LegacyFingerprint(fpSweep, fpHash); got != tt.leg {
				t.Errorf("same legacy fingerprint = %v, want %v", got, tt.leg)
			}
			c := &Campaign{Sweep: tt.s, PromptHash: fpHash}
			for _, rec := range []string{Fingerprint(fpSweep, fpHash), LegacyFingerprint(fpSweep, fpHash)} {
				want := tt.same
				if rec == LegacyFingerprint(fpSweep, fpHash) {
					want = tt.leg
				}
				if got := c.SameSweep(rec); got != want {
					t.Errorf("SameSweep(%s) = %v, want %v", rec[:15], got, want)
				}
			}
			if Fingerprint(tt.s, fpHash) == LegacyFingerprint(tt.s, fpHash) {
				t.Error("the two forms collide")
			}
		})
	}
}

// TestFingerprintPinnedWorkload pins the lines the workload options add.
// They are written only when set, so TestFingerprintPinned's value (a sweep
// without them) did not change when they came; this one is the same sweep
// with output_lengths=recorded and
// synthetic=count=50 input=normal(mean=300,sd=60,min=1,max=600) output=uniform(min=20,max=80)
// appended, in that order.
func TestFingerprintPinnedWorkload(t *testing.T) {
	const want = "sha256:6362265e39829819c5b4dc8a1172c6bd478769eb726e0fa2ca9922f2560d40d5"
	s := fpSweep
	s.OutputLengths = prompts.OutputRecorded
	s.Synthetic = &prompts.SyntheticSpec{Count: 50,
		Input:  prompts.Dist{Kind: prompts.DistNormal, Mean: 300, SD: 60, Min: 1, Max: 600},
		Output: prompts.Dist{Kind: prompts.DistUniform, Min: 20, Max: 80}}
	if got := Fingerprint(s, fpHash); got != want {
		t.Errorf("Fingerprint = %s, want %s", got, want)
	}
}

func TestFingerprintCoversEveryField(t *testing.T) {
	base := Fingerprint(fpSweep, fpHash)
	tests := []struct {
		name   string
		change func(*Sweep, *string)
		same   bool
	}{
		{"levels", func(s *Sweep, _ *string) { s.Concurrency = []int{1, 2, 6} }, false},
		{"level order", func(s *Sweep, _ *string) { s.Concurrency = []int{2, 1, 5} }, false},
		{"requests (not the comparison)", func(s *Sweep, _ *string) { s.Requests = 31 }, true},
		{"max_tokens", func(s *Sweep, _ *string) { s.MaxTokens = 201 }, false},
		{"warmup", func(s *Sweep, _ *string) { s.Warmup = 4 }, false},
		{"temperature", func(s *Sweep, _ *string) { s.Temperature = 0.7 }, false},
		{"ignore_eos", func(s *Sweep, _ *string) { s.IgnoreEOS = false }, false},
		{"endpoint", func(s *Sweep, _ *string) { s.Endpoint = EndpointCompletions }, false},
		{"repeats", func(s *Sweep, _ *string) { s.Repeats = 2 }, false},
		{"seed", func(s *Sweep, _ *string) { s.Seed = 2 }, false},
		{"prompt set", func(_ *Sweep, h *string) { *h = "sha256:other" }, false},
		{"unique_prompts", func(s *Sweep, _ *string) { s.UniquePrompts = true }, false},
		{"output_lengths recorded", func(s *Sweep, _ *string) { s.OutputLengths = prompts.OutputRecorded }, false},
		{"output_lengths max_tokens is the default", func(s *Sweep, _ *string) { s.OutputLengths = prompts.OutputMaxTokens }, true},
		{"synthetic set", func(s *Sweep, _ *string) { s.Synthetic = fpSynthetic(100, 100, 10) }, false},
		{"negative zero temperature", func(s *Sweep, _ *string) { s.Temperature = math.Copysign(0, -1) }, true},
		{"prompt file path (only content counts)", func(s *Sweep, _ *string) { s.Prompts = "/elsewhere/p.jsonl" }, true},
		{"request timeout (not the load)", func(s *Sweep, _ *string) { s.RequestTimeout = time.Minute }, true},
		{"empty endpoint is the default", func(s *Sweep, _ *string) { s.Endpoint = "" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, h := fpSweep, fpHash
			s.Concurrency = append([]int(nil), s.Concurrency...)
			tt.change(&s, &h)
			if got := Fingerprint(s, h); (got == base) != tt.same {
				t.Errorf("same fingerprint = %v, want %v", got == base, tt.same)
			}
		})
	}
	// Every knob of a synthetic set changes the fingerprint.
	withSynth := fpSweep
	withSynth.Synthetic = fpSynthetic(100, 100, 10)
	synthBase := Fingerprint(withSynth, fpHash)
	for name, spec := range map[string]*prompts.SyntheticSpec{
		"count":      fpSynthetic(101, 100, 10),
		"input":      fpSynthetic(100, 101, 10),
		"output":     fpSynthetic(100, 100, 11),
		"input kind": {Count: 100, Input: prompts.Dist{Kind: prompts.DistNormal, Mean: 100, SD: 1, Min: 1}, Output: prompts.Dist{Kind: prompts.DistFixed, Value: 10}},
	} {
		s := withSynth
		s.Synthetic = spec
		if Fingerprint(s, fpHash) == synthBase {
			t.Errorf("synthetic %s: same fingerprint", name)
		}
	}
	auto := fpSweep
	auto.Concurrency = []int{1}
	explicit := auto
	explicit.Requests = auto.RequestsFor(1)
	if Fingerprint(auto, fpHash) != Fingerprint(explicit, fpHash) {
		t.Error("requests: auto and the count it resolves to differ")
	}
}

// TestFingerprintRates: an open-loop sweep's rates, burstiness and mode
// are in its fingerprint, an unset burstiness is Poisson's 1, and a rate
// sweep never matches the concurrency sweep of the same numbers.
func TestFingerprintRates(t *testing.T) {
	rate := fpSweep
	rate.Concurrency, rate.Rates = nil, []float64{1, 2, 5}
	base := Fingerprint(rate, fpHash)
	if base == Fingerprint(fpSweep, fpHash) {
		t.Error("rates [1, 2, 5] and concurrency [1, 2, 5] share a fingerprint")
	}
	for _, tt := range []struct {
		name   string
		change func(*Sweep)
		same   bool
	}{
		{"rates", func(s *Sweep) { s.Rates = []float64{1, 2, 5.5} }, false},
		{"rate order", func(s *Sweep) { s.Rates = []float64{2, 1, 5} }, false},
		{"burstiness", func(s *Sweep) { s.Burstiness = 0.5 }, false},
		{"burstiness 1 is the default", func(s *Sweep) { s.Burstiness = 1 }, true},
		{"requests (not the comparison)", func(s *Sweep) { s.Requests = 100 }, true},
		{"seed (the schedule)", func(s *Sweep) { s.Seed = 5 }, false},
	} {
		s := rate
		s.Rates = append([]float64(nil), rate.Rates...)
		tt.change(&s)
		if got := Fingerprint(s, fpHash); (got == base) != tt.same {
			t.Errorf("%s: same fingerprint = %v, want %v", tt.name, got == base, tt.same)
		}
	}
}

// TestFingerprintIgnoresFormatting: two files that say the same thing in
// different YAML give the same fingerprint.
func TestFingerprintIgnoresFormatting(t *testing.T) {
	a := goodFiles.with(memFiles{cfgPath: `campaign: t
host: {ssh: gpu}
sweep:
  concurrency: [1, 8]
  max_tokens: 50
  temperature: 0
scenarios: [base]
`})
	b := goodFiles.with(memFiles{cfgPath: `# the same sweep, written differently
scenarios:
  - base
sweep:
  temperature: 0.0   # a float this time
  max_tokens: 0x32
  concurrency:
    - 1
    - 8
  requests: auto
host:
  ssh: gpu
campaign: t
`})
	ca, errs := loadMem(t, a)
	if errs != nil {
		t.Fatal(errs)
	}
	cb, errs := loadMem(t, b)
	if errs != nil {
		t.Fatal(errs)
	}
	if ca.Fingerprint() != cb.Fingerprint() {
		t.Errorf("fingerprints differ: %s vs %s", ca.Fingerprint(), cb.Fingerprint())
	}
}

// fpSynthetic is a synthetic set of count prompts of fixed input and output
// lengths.
func fpSynthetic(count, in, out int) *prompts.SyntheticSpec {
	return &prompts.SyntheticSpec{Count: count, Input: prompts.Dist{Kind: prompts.DistFixed, Value: in},
		Output: prompts.Dist{Kind: prompts.DistFixed, Value: out}}
}
