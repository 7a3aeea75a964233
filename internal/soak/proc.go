package soak

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// userHZ is the kernel's clock tick for the CPU times in /proc/PID/stat
// (USER_HZ): 100 on every Linux architecture Go supports, whatever the
// kernel's own HZ.
const userHZ = 100

// Sample is one reading of a process's resources from /proc.
type Sample struct {
	// At is when the reading was taken, from the sampler's start.
	At time.Duration
	// RSSKiB is the resident set (VmRSS); HWMKiB its peak so far (VmHWM).
	RSSKiB, HWMKiB int64
	// FDs is the number of open file descriptors (entries of /proc/PID/fd).
	FDs int
	// Threads is the number of OS threads (Threads in status). Go's
	// goroutines are not visible from outside the process.
	Threads int
	// CPU is the process's user plus system time so far.
	CPU time.Duration
}

// ReadSample reads pid's resources from /proc. It fails once the process
// has gone (or is a zombie, whose status has no VmRSS).
func ReadSample(pid int) (Sample, error) {
	var s Sample
	dir := "/proc/" + strconv.Itoa(pid)
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		return s, fmt.Errorf("reading the status of pid %d: %w", pid, err)
	}
	var haveRSS bool
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		switch key {
		case "VmRSS":
			s.RSSKiB, haveRSS = n, true
		case "VmHWM":
			s.HWMKiB = n
		case "Threads":
			s.Threads = int(n)
		}
	}
	if !haveRSS {
		return s, fmt.Errorf("reading the status of pid %d: no VmRSS (a zombie)", pid)
	}
	fds, err := os.ReadDir(dir + "/fd")
	if err != nil {
		return s, fmt.Errorf("listing the open files of pid %d: %w", pid, err)
	}
	s.FDs = len(fds)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return s, fmt.Errorf("reading the CPU time of pid %d: %w", pid, err)
	}
	cpu, err := parseStatCPU(string(stat))
	if err != nil {
		return s, fmt.Errorf("reading the CPU time of pid %d: %w", pid, err)
	}
	s.CPU = cpu
	return s, nil
}

// parseStatCPU returns utime + stime from a /proc/PID/stat line. The
// command name (field 2) is in parentheses and may hold spaces or
// parentheses itself, so fields are counted from the last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("short stat line %q", stat)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bad CPU time %q in stat", s)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// CSVHeader is the first line of a sampler's CSV.
var CSVHeader = []string{"elapsed_s", "rss_kib", "hwm_kib", "fds", "threads", "cpu_s"}

// Sampler reads a process every Interval until Stop and keeps the readings;
// each one is also written as a CSV row.
type Sampler struct {
	pid      int
	interval time.Duration
	out      *csv.Writer
	start    time.Time
	stop     chan struct{}
	done     chan struct{}

	mu      sync.Mutex
	samples []Sample
	err     error
}

// StartSampler samples pid at once and then every interval, writing CSV
// rows (after CSVHeader) to w.
func StartSampler(pid int, interval time.Duration, w io.Writer) *Sampler {
	s := &Sampler{pid: pid, interval: interval, out: csv.NewWriter(w), start: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{})}
	s.out.Write(CSVHeader)
	go s.loop()
	return s
}

func (s *Sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		s.take()
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

// take records one reading; a process that has gone is not an error (the
// sampler outlives it by up to one interval).
func (s *Sampler) take() {
	r, err := ReadSample(s.pid)
	if err != nil {
		return
	}
	r.At = time.Since(s.start)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = append(s.samples, r)
	s.out.Write([]string{
		strconv.FormatFloat(r.At.Seconds(), 'f', 1, 64),
		strconv.FormatInt(r.RSSKiB, 10), strconv.FormatInt(r.HWMKiB, 10),
		strconv.Itoa(r.FDs), strconv.Itoa(r.Threads),
		strconv.FormatFloat(r.CPU.Seconds(), 'f', 2, 64),
	})
	s.out.Flush()
	if err := s.out.Error(); err != nil && s.err == nil {
		s.err = fmt.Errorf("writing the samples: %w", err)
	}
}

// Stop ends the sampling and returns the readings and the first write
// error.
func (s *Sampler) Stop() ([]Sample, error) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples, s.err
}
