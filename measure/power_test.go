package measure

import (
	"math"
	"strings"
	"testing"
)

// readings returns one GPU's readings every step ns from t0 to t1, power
// f(t).
func readings(gpu int, t0, t1, step int64, f func(t int64) float64) []PowerSample {
	var out []PowerSample
	for t := t0; t <= t1; t += step {
		out = append(out, PowerSample{TimeNs: t, GPU: gpu, PowerW: f(t), UtilPct: -1, MemMiB: -1, SMMHz: -1})
	}
	return out
}

func TestPowerLogEnergy(t *testing.T) {
	const s = int64(1e9)
	flat := func(w float64) func(int64) float64 { return func(int64) float64 { return w } }
	ramp := func(t int64) float64 { return 100 + 10*float64(t)/1e9 } // 100 W at 0, +10 W/s
	cat := func(xs ...[]PowerSample) []PowerSample {
		var out []PowerSample
		for _, x := range xs {
			out = append(out, x...)
		}
		return out
	}
	tests := []struct {
		name    string
		log     PowerLog
		w       Window
		meanW   float64
		wantErr string
	}{
		{"flat, two GPUs summed", PowerLog{GPUs: []int{0, 1},
			Samples: cat(readings(0, 0, 20*s, s/2, flat(300)), readings(1, 0, 20*s, s/2, flat(200)))},
			Window{5 * s, 15 * s}, 500, ""},
		{"an idle GPU outside the scenario is not counted", PowerLog{GPUs: []int{1},
			Samples: cat(readings(0, 0, 20*s, s/2, flat(30)), readings(1, 0, 20*s, s/2, flat(200)))},
			Window{5 * s, 15 * s}, 200, ""},
		// The window's edges fall between readings: the interpolation gives
		// the exact mean of a linear ramp, 100 + 10·(mean of 2.25 and 12.75 s).
		{"ramp between readings", PowerLog{GPUs: []int{0}, Samples: readings(0, 0, 20*s, s/2, ramp)},
			Window{2*s + s/4, 12*s + 3*s/4}, 100 + 10*7.5, ""},
		{"window shorter than the interval", PowerLog{GPUs: []int{0}, Samples: readings(0, 0, 20*s, s/2, ramp)},
			Window{3*s + s/10, 3*s + s/5}, 100 + 10*3.15, ""},
		{"missing edge within the coverage", PowerLog{GPUs: []int{0}, Samples: readings(0, s/2, 20*s, s/2, flat(250))},
			Window{0, 10 * s}, 250, ""},
		{"too little coverage", PowerLog{GPUs: []int{0}, Samples: readings(0, 5*s, 20*s, s/2, flat(250))},
			Window{0, 10 * s}, 0, "span 50%"},
		{"a stalled sampler", PowerLog{GPUs: []int{0},
			Samples: cat(readings(0, 0, 3*s, s/2, flat(250)), readings(0, 10*s, 20*s, s/2, flat(250)))},
			Window{2 * s, 12 * s}, 0, "apart"},
		{"power [N/A]", PowerLog{GPUs: []int{0}, Unavailable: "power.draw is [N/A]"}, Window{0, s}, 0, "[N/A]"},
		{"readings of N/A are skipped", PowerLog{GPUs: []int{0},
			Samples: []PowerSample{{TimeNs: 0, PowerW: -1}, {TimeNs: s, PowerW: -1}}}, Window{0, s}, 0, "no power reading"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := tt.log.Energy(tt.w)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(e.MeanW-tt.meanW) > 1e-9*tt.meanW {
				t.Errorf("MeanW = %v, want %v", e.MeanW, tt.meanW)
			}
			if want := tt.meanW * tt.w.Seconds(); math.Abs(e.Joules-want) > 1e-9*want {
				t.Errorf("Joules = %v, want %v", e.Joules, want)
			}
		})
	}
}

func TestSetEnergy(t *testing.T) {
	const s = int64(1e9)
	log := PowerLog{GPUs: []int{0}, Samples: readings(0, 0, 30*s, s/2, func(int64) float64 { return 400 })}
	l := LevelSummary{Level: ConcurrencyLevel(4), SteadyStartNs: 10 * s, SteadyEndNs: 20 * s, Throughput: 2000}
	if err := l.SetEnergy(log); err != nil {
		t.Fatal(err)
	}
	// 400 W for 10 s over 20000 tokens: 200 J per 1000 tokens.
	if l.PowerW != 400 || math.Abs(l.JoulesPerKTok-200) > 1e-9 {
		t.Errorf("PowerW %v, JoulesPerKTok %v; want 400, 200", l.PowerW, l.JoulesPerKTok)
	}
}

// TestEnergyOverNodes: a deployment's energy is its GPUs' on every node,
// and a node without readings leaves the launch without energy rather
// than with the others' alone.
func TestEnergyOverNodes(t *testing.T) {
	const s = int64(1e9)
	flat := func(w float64) []PowerSample { return readings(0, 0, 30*s, s/2, func(int64) float64 { return w }) }
	node0 := PowerLog{GPUs: []int{0}, Samples: flat(400)}
	node1 := PowerLog{GPUs: []int{0}, Samples: flat(300), Host: "node1"}
	w := Window{10 * s, 20 * s}
	for _, tc := range []struct {
		name  string
		nodes []PowerLog
		want  float64 // mean watts; 0: an error
	}{
		{"one node", nil, 400},
		{"two nodes", []PowerLog{node1}, 700},
		{"a node without readings", []PowerLog{{Host: "node2", Unavailable: "the board reports no power"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := node0
			p.Nodes = tc.nodes
			e, err := p.Energy(w)
			switch {
			case tc.want == 0 && err == nil:
				t.Errorf("energy %+v, want an error", e)
			case tc.want == 0 && !strings.Contains(err.Error(), "node node2"):
				t.Errorf("error %q does not name the node", err)
			case tc.want != 0 && (err != nil || math.Abs(e.MeanW-tc.want) > 1e-9 || math.Abs(e.Joules-10*tc.want) > 1e-6):
				t.Errorf("energy %+v (%v), want %v W over 10 s", e, err, tc.want)
			}
		})
	}
}
