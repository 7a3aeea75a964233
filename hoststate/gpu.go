package hoststate

import (
	"fmt"
	"strconv"
	"strings"
)

// GPU is one GPU's state at one reading, from nvidia-smi --query-gpu. A
// field nil (or empty) is one the GPU or its driver does not report: a
// value nvidia-smi prints as "[N/A]" or "[Not Supported]".
type GPU struct {
	// Index is nvidia-smi's index of the GPU on its host.
	Index int `json:"index"`
	// SMMHz and MemMHz are the current SM and memory clocks; MaxSMMHz and
	// MaxMemMHz the most they are designed to run at, MHz.
	SMMHz     *int `json:"sm_mhz,omitempty"`
	MemMHz    *int `json:"mem_mhz,omitempty"`
	MaxSMMHz  *int `json:"max_sm_mhz,omitempty"`
	MaxMemMHz *int `json:"max_mem_mhz,omitempty"`
	// TempC is the core temperature, °C.
	TempC *int `json:"temp_c,omitempty"`
	// PowerW is the board's power draw (averaged over a second on Ampere
	// and newer); PowerLimitW the enforced limit, the least of the power
	// limiters, which the power management holds the draw under. W.
	PowerW      *float64 `json:"power_w,omitempty"`
	PowerLimitW *float64 `json:"power_limit_w,omitempty"`
	// Reasons are the clock event reasons active at the reading.
	Reasons *Reasons `json:"clock_event_reasons,omitempty"`
	// Counters are the time each counted reason has held the clocks down
	// since the driver loaded, µs; nil where the driver has no counters.
	Counters *Counters `json:"clock_event_counters_us,omitempty"`
	// ECCUncorrected is the count of uncorrected ECC errors since the
	// driver loaded (volatile), across the chip.
	ECCUncorrected *int64 `json:"ecc_uncorrected,omitempty"`
	// Persistence is whether persistence mode keeps the driver loaded
	// without clients.
	Persistence *bool `json:"persistence,omitempty"`
}

// Counters are clocks_event_reasons_counters.*: the time, µs, each reason
// has reduced the clocks since the driver loaded. nvidia-smi counts these
// reasons and no others (`nvidia-smi --help-query-gpu`).
type Counters struct {
	SWPowerCap           int64 `json:"sw_power_cap"`
	SWThermalSlowdown    int64 `json:"sw_thermal_slowdown"`
	HWThermalSlowdown    int64 `json:"hw_thermal_slowdown"`
	HWPowerBrakeSlowdown int64 `json:"hw_power_brake_slowdown"`
}

// byReason are the counters with the reason each counts.
func (c *Counters) byReason() []struct {
	bit Reasons
	us  int64
} {
	return []struct {
		bit Reasons
		us  int64
	}{
		{ReasonSWPowerCap, c.SWPowerCap},
		{ReasonSWThermalSlowdown, c.SWThermalSlowdown},
		{ReasonHWThermalSlowdown, c.HWThermalSlowdown},
		{ReasonHWPowerBrakeSlowdown, c.HWPowerBrakeSlowdown},
	}
}

// gpuField is one --query-gpu field: the names nvidia-smi knows it by
// (`nvidia-smi --help-query-gpu`: the first is the one queried, an older
// spelling every driver since the field came knows; the others are how
// newer drivers name it in a header), and where its value goes.
type gpuField struct {
	names []string
	set   func(g *GPU, driver *string, v string) error
}

// driverField is driver_version, the same on every row.
var driverField = gpuField{[]string{"driver_version"}, func(_ *GPU, d *string, v string) error {
	*d = v
	return nil
}}

// baseFields are the fields every driver answers, in the order queried.
var baseFields = []gpuField{
	{[]string{"index"}, func(g *GPU, _ *string, v string) error {
		n, err := strconv.Atoi(v)
		g.Index = n
		return err
	}},
	driverField,
	{[]string{"clocks.sm", "clocks.current.sm"}, intField(func(g *GPU) **int { return &g.SMMHz })},
	{[]string{"clocks.mem", "clocks.current.memory"}, intField(func(g *GPU) **int { return &g.MemMHz })},
	{[]string{"clocks.max.sm"}, intField(func(g *GPU) **int { return &g.MaxSMMHz })},
	{[]string{"clocks.max.mem", "clocks.max.memory"}, intField(func(g *GPU) **int { return &g.MaxMemMHz })},
	{[]string{"temperature.gpu"}, intField(func(g *GPU) **int { return &g.TempC })},
	{[]string{"power.draw"}, floatField(func(g *GPU) **float64 { return &g.PowerW })},
	{[]string{"enforced.power.limit", "gpu.power.current_limit"}, floatField(func(g *GPU) **float64 { return &g.PowerLimitW })},
	{[]string{"ecc.errors.uncorrected.volatile.total"}, func(g *GPU, _ *string, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		g.ECCUncorrected = &n
		return err
	}},
	{[]string{"persistence_mode"}, func(g *GPU, _ *string, v string) error {
		switch v {
		case "Enabled":
			g.Persistence = ptr(true)
		case "Disabled":
			g.Persistence = ptr(false)
		default:
			return fmt.Errorf("want Enabled or Disabled")
		}
		return nil
	}},
}

// reasonsField is the active reasons under either name: drivers before
// the rename (NVML's reference names them throttle reasons in R525, clock
// event reasons in R550) know only clocks_throttle_reasons.active, newer
// ones both, and name it clocks_event_reasons.active in a header.
func reasonsField(name string) gpuField {
	return gpuField{[]string{name, "clocks_event_reasons.active", "clocks_throttle_reasons.active"}, func(g *GPU, _ *string, v string) error {
		n, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(v), "0x"), 16, 64)
		r := Reasons(n)
		g.Reasons = &r
		return err
	}}
}

// counterFields are clocks_event_reasons_counters.*, which only newer
// drivers answer.
var counterFields = []gpuField{
	counterField("sw_power_cap", func(c *Counters) *int64 { return &c.SWPowerCap }),
	counterField("sw_thermal_slowdown", func(c *Counters) *int64 { return &c.SWThermalSlowdown }),
	counterField("hw_thermal_slowdown", func(c *Counters) *int64 { return &c.HWThermalSlowdown }),
	counterField("hw_power_brake_slowdown", func(c *Counters) *int64 { return &c.HWPowerBrakeSlowdown }),
}

func counterField(name string, at func(*Counters) *int64) gpuField {
	return gpuField{[]string{"clocks_event_reasons_counters." + name}, func(g *GPU, _ *string, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if g.Counters == nil {
			g.Counters = &Counters{}
		}
		*at(g.Counters) = n
		return err
	}}
}

// The two queries Command tries, newest first: a driver that refuses a
// field refuses the whole query (`Field "x" is not a valid field to
// query.`, exit 2), so an older one answers the second, which names the
// reasons the old way and has no counters.
var (
	queryNew = append(append(append([]gpuField{}, baseFields...), reasonsField("clocks_event_reasons.active")), counterFields...)
	queryOld = append(append([]gpuField{}, baseFields...), reasonsField("clocks_throttle_reasons.active"))
)

// queryArg is the --query-gpu value for fields.
func queryArg(fields []gpuField) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.names[0]
	}
	return strings.Join(names, ",")
}

// allFields is every field either query has, for reading a header.
func allFields() []gpuField {
	return append(append([]gpuField{}, queryNew...), queryOld[len(queryOld)-1])
}

// fieldNamed is the field a header or query names, with its unit (" [MHz]")
// left off; false for a field bakeoff does not read.
func fieldNamed(name string) (gpuField, bool) {
	name, _, _ = strings.Cut(strings.TrimSpace(name), " [")
	for _, f := range allFields() {
		for _, n := range f.names {
			if n == name {
				return f, true
			}
		}
	}
	return gpuField{}, false
}

// ParseGPUs reads nvidia-smi's rows of fields (--format=csv,noheader,
// nounits), one GPU a row, into its GPUs and the driver version. A field
// bakeoff does not read is skipped; one printed as "[N/A]", "[Not
// Supported]" or another bracketed word is left out of the GPU.
func ParseGPUs(fields []string, out string) ([]GPU, string, error) {
	var gpus []GPU
	driver := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		vals := strings.Split(line, ",")
		if len(vals) != len(fields) {
			return nil, "", fmt.Errorf("%q: %d fields, want %d", line, len(vals), len(fields))
		}
		var g GPU
		for i, name := range fields {
			f, ok := fieldNamed(name)
			v := strings.TrimSpace(vals[i])
			if !ok || absent(v) {
				continue
			}
			if err := f.set(&g, &driver, v); err != nil {
				return nil, "", fmt.Errorf("%q: %s %q: %w", line, name, v, err)
			}
		}
		gpus = append(gpus, g)
	}
	return gpus, driver, nil
}

// absent reports a value nvidia-smi prints for a field the GPU does not
// report: "[N/A]", "[Not Supported]", "[Unknown Error]" (bracketed), or
// "N/A" as older drivers print it.
func absent(v string) bool {
	return v == "" || v == "N/A" || strings.HasPrefix(v, "[")
}

func intField(at func(*GPU) **int) func(*GPU, *string, string) error {
	return func(g *GPU, _ *string, v string) error {
		n, err := strconv.Atoi(v)
		*at(g) = &n
		return err
	}
}

func floatField(at func(*GPU) **float64) func(*GPU, *string, string) error {
	return func(g *GPU, _ *string, v string) error {
		x, err := strconv.ParseFloat(v, 64)
		*at(g) = &x
		return err
	}
}

func ptr[T any](v T) *T { return &v }
