package hoststate

import (
	"fmt"
	"strings"
)

// GovernorFile is the CPU frequency governor of the first CPU: the others
// follow it unless someone set them one by one. Hosts without cpufreq
// (many VMs, where the hypervisor owns the clocks) have no such file.
const GovernorFile = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"

// FactsCommand prints what ParseFacts reads, in one round trip: the node
// name, the kernel release and the CPU governor, once per run.
const FactsCommand = `echo '#node'; uname -n; echo '#kernel'; uname -r; echo '#governor'; cat ` + GovernorFile + ` 2>/dev/null; true`

// Facts are what a run records of its host once: what does not move from
// launch to launch, but may from run to run.
type Facts struct {
	// Node is the host's node name (uname -n) and Kernel its kernel
	// release (uname -r).
	Node, Kernel string
	// Governor is the CPU frequency governor ("performance",
	// "powersave", "schedutil"); empty where the host has no cpufreq.
	Governor string
}

// ParseFacts reads FactsCommand's output. A missing governor is not an
// error; a missing node name or kernel is.
func ParseFacts(out string) (Facts, error) {
	s := splitSections(out)
	first := func(key string) string {
		if v := s[key]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	f := Facts{Node: first("#node"), Kernel: first("#kernel"), Governor: first("#governor")}
	if f.Node == "" || f.Kernel == "" {
		return f, fmt.Errorf("no node name or kernel release (uname -n, uname -r) in %q", strings.TrimSpace(out))
	}
	return f, nil
}
