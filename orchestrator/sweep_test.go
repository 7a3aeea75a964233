package orchestrator

import (
	"reflect"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// TestSweepSpecCarriesEveryKey: each of the campaign's sweep settings
// changes the load generator's Spec, so a key added to campaign.Sweep and
// not translated fails here rather than measuring something else quietly.
func TestSweepSpecCarriesEveryKey(t *testing.T) {
	set := map[reflect.Type]any{
		reflect.TypeFor[[]int]():                  []int{3},
		reflect.TypeFor[[]float64]():              []float64{2},
		reflect.TypeFor[float64]():                0.5,
		reflect.TypeFor[int]():                    7,
		reflect.TypeFor[int64]():                  int64(7),
		reflect.TypeFor[string]():                 "x",
		reflect.TypeFor[bool]():                   true,
		reflect.TypeFor[time.Duration]():          time.Second,
		reflect.TypeFor[*prompts.SyntheticSpec](): &prompts.SyntheticSpec{Count: 3},
		reflect.TypeFor[*prompts.SessionSpec]():   &prompts.SessionSpec{Turns: prompts.Dist{Kind: prompts.DistFixed, Value: 3}},
	}
	// Facts the campaign reads from the trace file when it loads, for the
	// fingerprint and the estimates: the sweep reads the file itself.
	derived := map[string]bool{"TraceHash": true, "TraceRows": true, "TraceSpan": true, "TraceOutput": true, "TraceUnsized": true}
	base := sweepSpec(campaign.Sweep{}, "sglang", "http://127.0.0.1:1")
	typ := reflect.TypeFor[campaign.Sweep]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if derived[f.Name] {
			continue
		}
		v, ok := set[f.Type]
		if !ok {
			t.Errorf("campaign.Sweep.%s: no test value for a %s; add one", f.Name, f.Type)
			continue
		}
		var sw campaign.Sweep
		reflect.ValueOf(&sw).Elem().Field(i).Set(reflect.ValueOf(v))
		if reflect.DeepEqual(sweepSpec(sw, "sglang", "http://127.0.0.1:1"), base) {
			t.Errorf("campaign.Sweep.%s does not reach the load generator", f.Name)
		}
	}
}
