package notes

import (
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// TestKVTransferNote: a disaggregated scenario run where its KV transfer had
// no RDMA device is warned about, naming the host and, when the transfer
// engine logged its count, the roles; the aggregated baseline, a host with
// devices its engine found, a host whose devices were not read and a run
// that read nothing say nothing.
func TestKVTransferNote(t *testing.T) {
	v := &verdict.Verdict{Scenarios: []verdict.Scenario{{Name: "baseline"}, {Name: "pd-disagg"}}}
	launches := map[string][]records.Launch{
		"baseline":  {{Host: "local"}, {Host: "local"}},
		"pd-disagg": {{Host: "local"}, {Host: "local"}},
	}
	host := func(r *results.RDMA) results.HostFacts { return results.HostFacts{Name: "gpu-1 (local)", RDMA: r} }
	tcp := "the KV cache of pd-disagg went from prefill to decode over TCP (SGLang's Mooncake falls back to TCP without an error), which adds to pd-disagg's TTFT: a host with RDMA would measure it faster"
	tests := []struct {
		name string
		host results.HostFacts
		want string // the note's text; "" for none
	}{
		{"no device", host(&results.RDMA{Devices: []string{}, Scenarios: []string{"pd-disagg"}}),
			"no RDMA device on gpu-1 (local) (/sys/class/infiniband lists none): " + tcp},
		{"no device, and the engine said so", host(&results.RDMA{Devices: []string{}, Scenarios: []string{"pd-disagg"},
			NoHCA: []string{"pd-disagg.prefill", "pd-disagg.decode", "other.decode"}}),
			"no RDMA device on gpu-1 (local) (/sys/class/infiniband lists none): " + tcp +
				`; roles prefill, decode logged "Topology discovery complete. Found 0 HCAs."`},
		{"devices the engine did not find", host(&results.RDMA{Devices: []string{"mlx5_1", "mlx5_0"}, Scenarios: []string{"pd-disagg"},
			NoHCA: []string{"pd-disagg.decode"}}),
			"gpu-1 (local) lists RDMA devices (mlx5_0, mlx5_1), but pd-disagg's transfer engine found none: " + tcp +
				`; role decode logged "Topology discovery complete. Found 0 HCAs."`},
		{"devices found", host(&results.RDMA{Devices: []string{"mlx5_0"}, Scenarios: []string{"pd-disagg"}}), ""},
		{"not read", host(&results.RDMA{Unread: "exit status 2", Scenarios: []string{"pd-disagg"}}), ""},
		// The sim moves no KV cache: the orchestrator leaves it out.
		{"no scenario wants RDMA", host(&results.RDMA{Devices: []string{}}), ""},
		{"a run from before the fact", host(nil), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := records.Input{Manifest: results.Manifest{Host: tt.host}, Launches: launches}
			notes := checkKVTransfer(v, in)
			if tt.want == "" {
				if len(notes) > 0 {
					t.Errorf("notes %+v, want none", notes)
				}
				return
			}
			if len(notes) != 1 {
				t.Fatalf("%d notes, want 1: %+v", len(notes), notes)
			}
			n := notes[0]
			if n.Scenario != "pd-disagg" || n.Check != verdict.CheckKVTransfer || n.Severity != verdict.SeverityWarn {
				t.Errorf("note %+v", n)
			}
			if n.Text != tt.want {
				t.Errorf("text\n  %s\nwant\n  %s", n.Text, tt.want)
			}
		})
	}
}

// TestKVTransferNoteFleet: in a fleet each launch is judged by its own
// host's facts: only the hosts without a device are named.
func TestKVTransferNoteFleet(t *testing.T) {
	v := &verdict.Verdict{Scenarios: []verdict.Scenario{{Name: "pd-disagg"}}}
	rdma := func(devs ...string) *results.HostFacts {
		return &results.HostFacts{RDMA: &results.RDMA{Devices: append([]string{}, devs...), Scenarios: []string{"pd-disagg"}}}
	}
	in := records.Input{
		Manifest: results.Manifest{Fleet: []results.FleetHost{
			{Host: "gpu-a", Facts: rdma("mlx5_0")}, {Host: "gpu-b", Facts: rdma()}, {Host: "gpu-c", Facts: rdma()}}},
		Launches: map[string][]records.Launch{"pd-disagg": {{Host: "gpu-a"}, {Host: "gpu-b"}, {Host: "gpu-b"}}},
	}
	notes := checkKVTransfer(v, in)
	if len(notes) != 1 || !strings.HasPrefix(notes[0].Text, "no RDMA device on gpu-b (/sys/class/infiniband lists none): ") {
		t.Errorf("notes %+v, want one naming gpu-b alone", notes)
	}
}
