package hoststate

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeSMI writes an nvidia-smi that answers the newer query when modern,
// and otherwise refuses the newer field names as a driver before the
// rename does (exit 2), answering the older query; exit, when not 0, is
// its status for any query, with what it prints then. It warns on its
// standard error as a GPU with a corrupt infoROM does.
func fakeSMI(t *testing.T, modern bool, exit int, says string) string {
	t.Helper()
	script := "#!/bin/sh\necho 'WARNING: infoROM is corrupted at gpu 0000:18:00.0' >&2\n"
	if exit != 0 {
		script += "echo \"" + says + "\"\nexit " + strconv.Itoa(exit) + "\n"
	}
	if !modern {
		script += "case \"$1\" in *clocks_event_reasons*) echo 'Field \"clocks_event_reasons.active\" is not a valid field to query.'; exit 2;; esac\n" +
			"echo '0, 470.82.01, 1410, 1215, 1410, 1215, 40, 61.00, 400.00, 0, Enabled, 0x0000000000000001'\n"
	} else {
		script += "echo '0, 580.159.04, 345, 3201, 1980, 3201, 34, 77.86, 700.00, 0, Enabled, 0x0000000000000001, 0, 0, 0, 0'\n"
	}
	p := filepath.Join(t.TempDir(), "nvidia-smi")
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCommand runs Command in sh on this machine, with fake nvidia-smis of
// each kind, and reads its answer: one round trip gives the load, the CPUs,
// the clock and, where a driver answers either query, the GPUs; where none
// does, the CPU side with a GPUError quoting nvidia-smi.
func TestCommand(t *testing.T) {
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		t.Skip("no /proc/loadavg here")
	}
	for _, tc := range []struct {
		name   string
		smi    string
		driver string
		err    string
	}{
		{"no GPU", "", "", ""},
		{"a driver after the rename", fakeSMI(t, true, 0, ""), "580.159.04", ""},
		{"a driver before it", fakeSMI(t, false, 0, ""), "470.82.01", ""},
		{"no driver loaded", fakeSMI(t, true, 9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."), "",
			"exit status 9: WARNING: infoROM is corrupted at gpu 0000:18:00.0 NVIDIA-SMI has failed"},
		{"no nvidia-smi", filepath.Join(t.TempDir(), "nvidia-smi"), "", "exit status 127"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command("sh", "-c", Command(tc.smi)).Output()
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse(string(out))
			var ge *GPUError
			switch {
			case tc.err == "" && err != nil, tc.err != "" && (!errors.As(err, &ge) || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want %q; output:\n%s", err, tc.err, out)
			}
			if s.CPUs < 1 || s.UptimeS <= 0 || s.Driver != tc.driver || (tc.driver != "") != (len(s.GPUs) == 1) {
				t.Errorf("%+v from:\n%s", s, out)
			}
		})
	}
}

// TestFactsCommand runs FactsCommand here: a host without cpufreq (this
// one, or a VM) has no governor and no error.
func TestFactsCommand(t *testing.T) {
	out, err := exec.Command("sh", "-c", FactsCommand).Output()
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFacts(string(out))
	if err != nil || f.Kernel == "" {
		t.Fatalf("%+v, %v from:\n%s", f, err, out)
	}
	if _, statErr := os.Stat(GovernorFile); (statErr == nil) != (f.Governor != "") {
		t.Errorf("governor %q, file: %v", f.Governor, statErr)
	}
}
