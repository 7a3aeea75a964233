package slurm

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseSqueue reads lines of squeueFormat. asked is when squeue was run:
// a job's End is that plus the time it had left.
func parseSqueue(out string, asked time.Time) ([]Job, error) {
	var jobs []Job
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.SplitN(line, "|", 6)
		if len(f) != 6 {
			return nil, fmt.Errorf("squeue line %q: want 6 fields separated by |", line)
		}
		id := strings.TrimSpace(f[0])
		if !validID(id) {
			return nil, fmt.Errorf("squeue line %q: job id %q is not a number", line, id)
		}
		j := Job{ID: id, State: strings.TrimSpace(f[1]), Reason: strings.TrimSpace(f[2]), Name: f[5]}
		// States can carry a suffix on some versions ("CANCELLED by 0").
		if i := strings.IndexByte(j.State, ' '); i > 0 {
			j.State = j.State[:i]
		}
		if nodes := strings.TrimSpace(f[4]); nodes != "" && j.State != StatePending {
			j.Nodes = []string{nodes}
		}
		if j.State != StatePending {
			left, limited, err := ParseTimeLeft(strings.TrimSpace(f[3]))
			if err != nil {
				return nil, fmt.Errorf("squeue line %q: %w", line, err)
			}
			if limited {
				j.End = asked.Add(left)
			}
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// ParseTimeLeft reads squeue's %L: a Slurm time, or UNLIMITED / NOT_SET /
// INVALID, which mean no limit is known (limited false).
func ParseTimeLeft(s string) (left time.Duration, limited bool, err error) {
	switch s {
	case "UNLIMITED", "NOT_SET", "INVALID", "":
		return 0, false, nil
	}
	d, err := ParseTime(s)
	if err != nil {
		return 0, false, fmt.Errorf("time left %q: %w", s, err)
	}
	return d, true, nil
}

// ParseTime reads a time in Slurm's formats, as --time and squeue's
// durations write it: "minutes", "minutes:seconds", "hours:minutes:seconds",
// "days-hours", "days-hours:minutes" and "days-hours:minutes:seconds".
func ParseTime(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("empty time")
	}
	days := 0
	rest := s
	hasDays := false
	if i := strings.IndexByte(s, '-'); i >= 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q: bad days %q (want days-hours:minutes:seconds)", s, s[:i])
		}
		days, rest, hasDays = n, s[i+1:], true
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 || (hasDays && rest == "") {
		return 0, fmt.Errorf("%q: want minutes, minutes:seconds, hours:minutes:seconds or days-hours[:minutes[:seconds]]", s)
	}
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p == "" || strings.HasPrefix(p, "+") {
			if p == s {
				return 0, fmt.Errorf("%q is not a Slurm time (minutes, minutes:seconds, hours:minutes:seconds or days-hours[:minutes[:seconds]])", s)
			}
			return 0, fmt.Errorf("%q: %q is not a number", s, p)
		}
		nums[i] = n
	}
	var h, m, sec int
	switch {
	case hasDays && len(nums) == 1:
		h = nums[0]
	case hasDays && len(nums) == 2:
		h, m = nums[0], nums[1]
	case len(nums) == 3:
		h, m, sec = nums[0], nums[1], nums[2]
	case len(nums) == 2:
		m, sec = nums[0], nums[1]
	default:
		m = nums[0]
	}
	if len(nums) > 1 && (sec > 59 || (len(nums) == 3 || hasDays) && m > 59) {
		return 0, fmt.Errorf("%q: minutes and seconds go up to 59", s)
	}
	if hasDays && h > 23 {
		return 0, fmt.Errorf("%q: hours go up to 23 after days-", s)
	}
	d := time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second
	return d, nil
}

// FormatTime writes d for --time: "days-hours:minutes:seconds", or
// "hours:minutes:seconds" under a day. Slurm counts whole minutes and
// rounds a limit with seconds up.
func FormatTime(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d.Round(time.Second) / time.Second)
	days, s := s/86400, s%86400
	h, s := s/3600, s%3600
	m, s := s/60, s%60
	if days > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}

// parseNodeAddrs reads sinfo's "%N|%o" lines (a node appears once per
// partition it is in).
func parseNodeAddrs(out string) (map[string]string, error) {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, addr, ok := strings.Cut(line, "|")
		name, addr = strings.TrimSpace(name), strings.TrimSpace(addr)
		if !ok || name == "" || addr == "" {
			return nil, fmt.Errorf("sinfo line %q: want NAME|ADDRESS", line)
		}
		m[name] = addr
	}
	return m, nil
}
