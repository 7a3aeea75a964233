package notes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// mooncakeNoHCA is the line the notes quote: Mooncake's transfer engine's
// own count when it finds no RDMA device (the orchestrator watches the
// roles' logs for it and records the roles in the host's facts).
const mooncakeNoHCA = "Topology discovery complete. Found 0 HCAs."

// checkKVTransfer warns, per disaggregated scenario, when its KV cache went
// from its prefill worker to its decode worker over TCP: a host it ran on
// has no RDMA device (/sys/class/infiniband lists none), or its transfer
// engine said it found none. SGLang's Mooncake then installs its TCP
// transport without an error (docs/ENGINES.md, SGLang deployments), and
// every first token carries the slower transfer: the scenario's TTFT
// against an aggregated baseline is not what a cluster with RDMA measures.
// It reads the host facts the run recorded (results.RDMA); a run that read
// none says nothing.
func checkKVTransfer(v *verdict.Verdict, in records.Input) []verdict.Note {
	// The facts of each host, by the name its launches carry: a fleet's
	// entries, else the run's one host for every launch.
	byHost := map[string]*results.HostFacts{}
	for _, fh := range in.Manifest.Fleet {
		if fh.Facts != nil {
			byHost[fh.Host] = fh.Facts
		}
	}
	factsOf := func(host string) *results.HostFacts {
		if len(in.Manifest.Fleet) == 0 {
			return &in.Manifest.Host
		}
		return byHost[host]
	}
	var notes []verdict.Note
	for _, s := range v.Scenarios {
		var bare, blind []string // hosts without a device; hosts with devices the engine did not find
		var roles, devices []string
		seen := map[*results.HostFacts]bool{}
		for _, ln := range in.Launches[s.Name] {
			f := factsOf(ln.Host)
			if f == nil || f.RDMA == nil || seen[f] || !slices.Contains(f.RDMA.Scenarios, s.Name) {
				continue
			}
			seen[f] = true
			logged := rolesOf(f.RDMA.NoHCA, s.Name)
			for _, r := range logged {
				if !slices.Contains(roles, r) {
					roles = append(roles, r)
				}
			}
			name := hostName(f, ln.Host)
			switch {
			case f.RDMA.Unread == "" && len(f.RDMA.Devices) == 0:
				bare = append(bare, name)
			case len(logged) > 0:
				blind = append(blind, name)
				devices = append(devices, f.RDMA.Devices...)
			}
		}
		said := ""
		if len(roles) > 0 {
			word := "role"
			if len(roles) > 1 {
				word = "roles"
			}
			said = fmt.Sprintf("; %s %s logged %q", word, strings.Join(roles, ", "), mooncakeNoHCA)
		}
		tcp := fmt.Sprintf("the KV cache of %s went from prefill to decode over TCP (SGLang's Mooncake falls back to TCP without an error), which adds to %s's TTFT: a host with RDMA would measure it faster", s.Name, s.Name)
		if len(bare) > 0 {
			notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckKVTransfer, Scenario: s.Name,
				Text: fmt.Sprintf("no RDMA device on %s (/sys/class/infiniband lists none): %s%s", strings.Join(bare, ", "), tcp, said)})
		} else if len(blind) > 0 {
			slices.Sort(devices)
			notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckKVTransfer, Scenario: s.Name,
				Text: fmt.Sprintf("%s lists RDMA devices (%s), but %s's transfer engine found none: %s%s", strings.Join(blind, ", "), strings.Join(slices.Compact(devices), ", "), s.Name, tcp, said)})
		}
	}
	return notes
}

// rolesOf are the roles of scenario name among SCENARIO.ROLE names.
func rolesOf(names []string, scenario string) []string {
	var out []string
	for _, n := range names {
		if r, ok := strings.CutPrefix(n, scenario+"."); ok {
			out = append(out, r)
		}
	}
	return out
}

// hostName names a host in a note: its facts' name, else the launches'.
func hostName(f *results.HostFacts, host string) string {
	if f.Name != "" {
		return f.Name
	}
	return host
}
