package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/results"
)

// A disaggregated deployment moves each request's KV cache from its prefill
// worker to its decode worker. SGLang's default transfer engine, Mooncake,
// looks for RDMA devices when it starts and, finding none, installs its TCP
// transport without an error: the run goes on, each first token paying a
// slower transfer, and the comparison with an aggregated server says
// nothing of it (docs/ENGINES.md, SGLang deployments, has the sources). So
// the host's RDMA devices are read once per run, and the workers' logs are
// watched for Mooncake's own count, and both go into the manifest's host
// facts, where the verdict's notes find them.

// rdmaCommand lists the host's RDMA devices: the kernel's InfiniBand core
// registers each one (InfiniBand, RoCE, iWARP) under /sys/class/infiniband,
// which is absent when there is none. A directory that cannot be listed
// fails the command, rather than reading as empty.
const rdmaCommand = "if [ -d /sys/class/infiniband ]; then ls -1 /sys/class/infiniband; fi"

// parseRDMA reads rdmaCommand's output: one device a line, sorted; empty
// (not nil) when there is none, since none is the fact recorded.
func parseRDMA(out string) []string {
	devs := strings.Fields(out)
	slices.Sort(devs)
	if devs == nil {
		devs = []string{}
	}
	return devs
}

// mooncakeNoHCA is what Mooncake's transfer engine logs when its topology
// discovery finds no RDMA device, before it installs the TCP transport and
// says nothing more of it: TransferEngineImpl::init in kvcache-ai/Mooncake
// mooncake-transfer-engine/src/transfer_engine_impl.cpp at commit
// 0066eef42096f7cb7ddd3bb8ae0a56d00c6d96c2 (`"Topology discovery complete.
// Found " << getHcaList().size() << " HCAs."`). It comes through glog on
// stderr, which the role's log holds.
const mooncakeNoHCA = "Topology discovery complete. Found 0 HCAs."

// saysNoHCA reports whether a log line is Mooncake's word that it found no
// RDMA device.
func saysNoHCA(line string) bool { return strings.Contains(line, mooncakeNoHCA) }

// SGLang's disaggregation flags and the transfer backends that want RDMA:
// --disaggregation-mode {null,prefill,decode} and
// --disaggregation-transfer-backend, whose default is mooncake
// (sgl-project/sglang python/sglang/srt/arg_groups/fields/disagg.py at
// commit 07a7b67cd1f3144f78f81d789f72408a77ea7455). NIXL moves the KV cache
// through UCX, which picks the host's transports itself. mooncake_tcp is TCP
// by choice, fake moves nothing, and ascend and mori are other hardware's.
const (
	argDisaggMode    = "disaggregation-mode"
	argDisaggBackend = "disaggregation-transfer-backend"
	backendMooncake  = "mooncake"
	backendNIXL      = "nixl"
)

// argValue is the first value of a scenario's flag key, "" without one.
func argValue(sc *campaign.Scenario, key string) string {
	for _, a := range sc.Args {
		if a.Key == key && len(a.Values) > 0 {
			return a.Values[0]
		}
	}
	return ""
}

// disaggRole reports whether a role, as it runs (RoleScenario), is a
// prefill or decode worker of SGLang's disaggregation, and its transfer
// backend.
func disaggRole(rs *campaign.Scenario) (disagg bool, backend string) {
	if rs.Engine != "" && rs.Engine != engine.SGLang || len(rs.Launch) > 0 {
		return false, ""
	}
	switch argValue(rs, argDisaggMode) {
	case "prefill", "decode":
	default:
		return false, ""
	}
	backend = argValue(rs, argDisaggBackend)
	if backend == "" {
		backend = backendMooncake
	}
	return true, backend
}

// runsSim reports whether the campaign's engine command is this binary's
// simulated server, which moves no KV cache over any network.
func runsSim(c *campaign.Campaign) bool {
	cmd := c.Engine.Command
	return len(cmd) >= 2 && cmd[0] == campaign.TokenBakeoff && cmd[1] == "sim"
}

// envForceTCP is the variable that makes Mooncake install its TCP transport
// whatever the host has ("MC_FORCE_TCP is set, using TCP transport only",
// transfer_engine_impl.cpp above; SGLang then names no device,
// device_communicators/mooncake_transfer_engine.py at commit
// 00157bdc625dc33252df843902d7626d7b91b080): TCP by choice, as
// mooncake_tcp is.
const envForceTCP = "MC_FORCE_TCP"

// wantsRDMA reports whether a disaggregated role's KV transfer wants RDMA:
// Mooncake or NIXL, not forced to TCP, on a real engine.
func wantsRDMA(c *campaign.Campaign, rs *campaign.Scenario, backend string) bool {
	switch {
	case runsSim(c):
		return false
	case backend == backendNIXL:
		return true
	case backend != backendMooncake:
		return false
	}
	// Mooncake asks only whether the variable is set (getenv), in the
	// launch's environment: engine.env with the role's over it.
	_, forced := rs.Env[envForceTCP]
	_, forcedAll := c.Engine.Env[envForceTCP]
	return !forced && !forcedAll
}

// disaggScenarios are the campaign's scenarios with a disaggregated role
// (all), and those of them whose KV transfer wants RDMA (kv, wantsRDMA).
func disaggScenarios(c *campaign.Campaign) (all, kv []string) {
	for _, sc := range c.Scenarios {
		if sc.Deployment == nil {
			continue
		}
		isAny, isKV := false, false
		for _, r := range sc.Deployment.Roles {
			rs := sc.RoleScenario(r)
			disagg, backend := disaggRole(rs)
			isAny = isAny || disagg
			isKV = isKV || disagg && wantsRDMA(c, rs, backend)
		}
		if isAny {
			all = append(all, sc.Name)
		}
		if isKV {
			kv = append(kv, sc.Name)
		}
	}
	return all, kv
}

// watchesNoHCA reports whether a role's log is watched for mooncakeNoHCA:
// a worker of a scenario whose KV transfer is Mooncake's.
func watchesNoHCA(c *campaign.Campaign, rs *campaign.Scenario) bool {
	disagg, backend := disaggRole(rs)
	return disagg && backend == backendMooncake && wantsRDMA(c, rs, backend)
}

// rdmaFacts reads the host's RDMA devices into its facts when a scenario of
// the campaign is disaggregated, and warns when a scenario's KV transfer
// will run without one. A host that cannot say is a warning too: the fact
// is then unread, not none.
func (w *worker) rdmaFacts(ctx context.Context) {
	o := w.o
	all, kv := disaggScenarios(o.c)
	if len(all) == 0 {
		return
	}
	r := &results.RDMA{Scenarios: kv}
	w.facts.RDMA = r
	out, _, err := w.h.Run(ctx, rdmaCommand)
	if err != nil {
		r.Unread = err.Error()
		w.warn("", fmt.Sprintf("reading the RDMA devices of %s (%s): %v", w.h.Name(), rdmaCommand, err))
		return
	}
	r.Devices = parseRDMA(string(out))
	if len(r.Devices) == 0 && len(kv) > 0 {
		w.warn("", fmt.Sprintf("%s has no RDMA device (/sys/class/infiniband lists none): the KV cache of %s will go from prefill to decode over TCP, SGLang's Mooncake falling back without an error, which adds to every first token (docs/ENGINES.md, SGLang deployments)",
			w.h.Name(), strings.Join(kv, ", ")))
	}
}

// noHCA records that a role's transfer engine said it found no RDMA device:
// once per role, in its host's facts (rewriting the manifest) and as a
// warning. The facts' RDMA is one value that every copy of the host's
// facts points to (the manifest's host or fleet entry, a slot's worker), so
// the manifest written next has it.
func (s *scenarioRun) noHCA(p *roleProc) {
	o := s.o
	name := s.sc.Name + "." + p.in.Role.Name
	o.mu.Lock()
	r := p.node.facts.RDMA
	if r == nil || slices.Contains(r.NoHCA, name) {
		o.mu.Unlock()
		return
	}
	r.NoHCA = append(r.NoHCA, name)
	err := o.writeManifest()
	o.mu.Unlock()
	s.warn(fmt.Sprintf("role %s on %s logged %q: its KV cache goes over TCP, which adds to %s's TTFT", p.name, p.node.h.Name(), mooncakeNoHCA, s.sc.Name))
	if err != nil {
		s.warn(fmt.Sprintf("recording that role %s found no RDMA device: %v", p.name, err))
	}
}
