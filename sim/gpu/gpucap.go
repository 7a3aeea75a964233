package gpu

import (
	"fmt"
	"strconv"
	"strings"
)

// GPUComputeCap is the fake GPUs' compute capability, as nvidia-smi's
// compute_cap field reports it: the RTX PRO 6000 Blackwell Server Edition
// is SM120.
const GPUComputeCap = "12.0"

// SimComputeCapEnv names the environment variable that makes the fake GPUs
// report another compute capability ("9.0" for Hopper, "10.0" for B200):
// what SGLang refuses or turns on by itself depends on it (fusion.go). Only
// the capability changes; name, memory and power stay the RTX PRO 6000's.
const SimComputeCapEnv = "BAKEOFF_SIM_COMPUTE_CAP"

// ComputeCap is the simulated GPUs' compute capability, "MAJOR.MINOR":
// $BAKEOFF_SIM_COMPUTE_CAP, else GPUComputeCap.
func ComputeCap(getenv func(string) string) (string, error) {
	v := getenv(SimComputeCapEnv)
	if v == "" {
		return GPUComputeCap, nil
	}
	if _, err := CapMajor(v); err != nil {
		return "", fmt.Errorf("bad %s=%q: want MAJOR.MINOR, as nvidia-smi's compute_cap (12.0)", SimComputeCapEnv, v)
	}
	return v, nil
}

// CapMajor is the major version of a "MAJOR.MINOR" capability.
func CapMajor(cc string) (int, error) {
	major, minor, ok := strings.Cut(cc, ".")
	if !ok {
		return 0, fmt.Errorf("no minor version in %q", cc)
	}
	if _, err := strconv.Atoi(minor); err != nil {
		return 0, err
	}
	return strconv.Atoi(major)
}
