package remote

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Defaults for detached processes.
const (
	// DefaultStopPoll is how often StopMatching looks whether the signalled
	// processes are gone (Stop looks on the host, every stopPoll).
	DefaultStopPoll = 200 * time.Millisecond
	// DefaultKillWait is how long Stop waits after SIGKILL for the processes
	// to disappear before it reports them as unkillable.
	DefaultKillWait = 10 * time.Second
	// pidFileWait is how long Start's shell waits for the detached process to
	// write its pid file, in steps of 50 ms (about 10 s).
	pidFileWaitSteps = 200
)

// ProcessSpec describes a server to start detached from the connection that
// starts it.
type ProcessSpec struct {
	// Command is a shell command line, already quoted; it is run by `sh -c`.
	Command string
	// Env is added to the command's environment.
	Env map[string]string
	// Dir is the working directory ("" = the login directory).
	Dir string
	// LogFile receives stdout and stderr, appended.
	LogFile string
	// PIDFile receives the process id, which is also the process group and
	// session id of everything the command starts.
	PIDFile string
	// ExitFile, when set, makes the process a job that ends: its exit status
	// is written there when it does (ExitStatus reads it), since the detached
	// process has no parent on this side to report it. A server has none.
	ExitFile string
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Start launches p on h so that it survives the connection that launched it:
// in a new session (setsid), stdin from /dev/null, stdout and stderr appended
// to p.LogFile, and its pid, which is also its process group id, written to
// p.PIDFile. It returns as soon as the pid file is written.
func Start(ctx context.Context, h Host, p ProcessSpec) (int, error) {
	switch {
	case strings.TrimSpace(p.Command) == "":
		return 0, fmt.Errorf("%s: starting a process: empty command", h.Name())
	case p.LogFile == "" || p.PIDFile == "":
		return 0, fmt.Errorf("%s: starting %q: a log file and a pid file are required", h.Name(), shorten(p.Command, 80))
	}
	keys := make([]string, 0, len(p.Env))
	for k := range p.Env {
		if !envName.MatchString(k) {
			return 0, fmt.Errorf("%s: starting %q: bad environment variable name %q", h.Name(), shorten(p.Command, 80), k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)

	pidFile, logFile := QuotePath(p.PIDFile), QuotePath(p.LogFile)
	// The detached shell writes its own pid ($$) rather than the caller
	// using $!: setsid forks when it happens to be a group leader, and then
	// $! is a process that is already gone. exec keeps that pid for the
	// command, so pid = process group = session.
	// The pid file and the directories Start creates are user-only (the
	// outer shell runs under umask 077); the process itself gets back the
	// umask the host gave the shell ($1), so that what it writes is as it
	// would be without bakeoff.
	var inner strings.Builder
	fmt.Fprintf(&inner, "echo $$ > %s || exit 1\n", pidFile)
	inner.WriteString("umask \"$1\" || exit 1\n")
	if p.Dir != "" {
		fmt.Fprintf(&inner, "cd %s || exit 1\n", QuotePath(p.Dir))
	}
	for _, k := range keys {
		fmt.Fprintf(&inner, "export %s=%s\n", k, Quote(p.Env[k]))
	}
	if p.ExitFile != "" {
		// The job runs under the host's umask; its exit status is bakeoff's
		// own file, written user-only like the pid file.
		fmt.Fprintf(&inner, "sh -c %s; s=$?; umask 077; echo $s > %s\n", Quote(p.Command), QuotePath(p.ExitFile))
	} else {
		fmt.Fprintf(&inner, "exec sh -c %s\n", Quote(p.Command))
	}

	var outer strings.Builder
	outer.WriteString("command -v setsid >/dev/null 2>&1 || { echo 'setsid not found' >&2; exit 1; }\n")
	outer.WriteString("hostumask=$(umask)\numask 077\n")
	fmt.Fprintf(&outer, "mkdir -p %s %s || exit 1\n", QuotePath(path.Dir(p.PIDFile)), QuotePath(path.Dir(p.LogFile)))
	if p.Dir != "" {
		fmt.Fprintf(&outer, "[ -d %s ] || { echo 'no such directory' >&2; exit 1; }\n", QuotePath(p.Dir))
	}
	fmt.Fprintf(&outer, "rm -f %s\n", pidFile)
	// Every descriptor is redirected so the connection's session can close
	// while the process runs on.
	fmt.Fprintf(&outer, "setsid sh -c %s sh \"$hostumask\" </dev/null >>%s 2>&1 &\n", Quote(inner.String()), logFile)
	fmt.Fprintf(&outer, "i=0\nwhile [ ! -s %s ]; do i=$((i+1)); if [ $i -gt %d ]; then echo 'pid file was not written' >&2; exit 1; fi; sleep 0.05; done\n", pidFile, pidFileWaitSteps)
	fmt.Fprintf(&outer, "cat %s\n", pidFile)

	if w, ok := h.(startWatcher); ok {
		w.starting(p)
	}
	out, _, err := h.Run(ctx, outer.String())
	if err != nil {
		return 0, fmt.Errorf("%s: starting %q: %w", h.Name(), shorten(p.Command, 80), err)
	}
	pid, err := strconv.Atoi(lastLine(out))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("%s: starting %q: pid file %s holds %q", h.Name(), shorten(p.Command, 80), p.PIDFile, shorten(string(out), 40))
	}
	return pid, nil
}

// procsFn is a shell function, `procs G TREE PREFIX`, that prints
// "PREFIXpid ppid pgrp sid starttime" for every live (not zombie) process
// that is G, is in group or session G, or whose "pid:starttime" is in TREE
// (a list separated by spaces); for every live process when G is empty.
// starttime (clock ticks after boot, field 22 of stat) tells a process
// from a later one that reused its pid. It reads /proc rather than running
// ps, which minimal hosts lack, and counts a zombie as gone because an init
// that does not reap would keep it forever.
//
// With awk (POSIX; busybox has it) one cat reads every stat file in large
// reads and awk parses them. The shell's own loop is the fallback: its
// `read` builtin takes a file a byte at a time, which over a few hundred
// processes is a few hundred thousand system calls, most of a CPU second on
// a loaded host, at every look.
const procsFn = `procs() {
  if command -v awk >/dev/null 2>&1; then
    cat /proc/[0-9]*/stat 2>/dev/null | awk -v g="$1" -v tree=" $2 " -v pre="$3" '{
      s = $0; sub(/^.*\) /, "", s); split(s, f, " ")
      if (f[1] ~ /^[ZXx]/) next
      if (g == "" || $1 == g || f[3] == g || f[4] == g || index(tree, " " $1 ":" f[20] " ")) print pre $1, f[2], f[3], f[4], f[20]
    }'
    return 0
  fi
  pg_=$1 pt_=" $2 " pp_=$3
  for d in /proc/[0-9]*; do
    s=
    read -r s 2>/dev/null < "$d/stat" || continue
    r=${s##*) }
    set -- $r
    case "$1" in Z|X|x) continue ;; esac
    p=${d#/proc/}
    case "$pt_" in
      *" $p:${20} "*) ;;
      *) if [ -n "$pg_" ] && [ "$p" != "$pg_" ] && [ "$3" != "$pg_" ] && [ "$4" != "$pg_" ]; then continue; fi ;;
    esac
    echo "$pp_$p $2 $3 $4 ${20}"
  done
}
`

// groupMembersFn is a shell function, `members` (G in $g), that prints the
// pids of the live (not zombie) processes whose process group or session is
// G, and G itself (a pid file written by other tools may hold a process that
// leads no group), one a line.
const groupMembersFn = procsFn + membersFn

const membersFn = `members() {
  procs "$g" "" "" | while read -r p _; do echo "$p"; done
}
`

// readPID reads a pid file on h; ok is false when it is missing or empty.
func readPID(ctx context.Context, h Host, pidFile string) (pid int, ok bool, err error) {
	out, _, err := h.Run(ctx, readPIDCmd(pidFile))
	if err != nil {
		return 0, false, fmt.Errorf("%s: reading pid file %s: %w", h.Name(), pidFile, err)
	}
	s := lastLine(out)
	if s == "" {
		return 0, false, nil
	}
	pid, err = strconv.Atoi(s)
	if err != nil || pid <= 1 {
		return 0, false, fmt.Errorf("%s: pid file %s holds %q, not a pid", h.Name(), pidFile, shorten(s, 40))
	}
	return pid, true, nil
}

// startWatcher is a host that keeps its own table of the processes started
// on it (Dry): Start tells it what the command it is about to send starts.
type startWatcher interface {
	starting(p ProcessSpec)
}

func readPIDCmd(pidFile string) string {
	return fmt.Sprintf("if [ -s %[1]s ]; then cat %[1]s; fi", QuotePath(pidFile))
}

func removePIDCmd(pidFile string) string { return "rm -f " + QuotePath(pidFile) }

// ExitStatus reads the exit status a job (ProcessSpec.ExitFile) wrote when
// it ended: "" while it has not, or when it was killed before it could.
func ExitStatus(ctx context.Context, h Host, exitFile string) (string, error) {
	out, _, err := h.Run(ctx, exitStatusCmd(exitFile))
	if err != nil {
		return "", fmt.Errorf("%s: reading the exit status %s: %w", h.Name(), exitFile, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func exitStatusCmd(exitFile string) string {
	return "cat " + QuotePath(exitFile) + " 2>/dev/null || true"
}

// HasCommand reports whether the host's shell finds the command name.
func HasCommand(ctx context.Context, h Host, name string) (bool, error) {
	out, _, err := h.Run(ctx, hasCommandCmd(name))
	if err != nil {
		return false, fmt.Errorf("%s: looking for %s: %w", h.Name(), name, err)
	}
	return strings.TrimSpace(string(out)) == "yes", nil
}

const hasCommandPrefix = "command -v "

func hasCommandCmd(name string) string {
	return hasCommandPrefix + Quote(name) + " >/dev/null 2>&1 && echo yes || true"
}

// lastLine returns the last non-blank line of out, trimmed: what a command
// printed last, after anything a chatty login script printed first.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// parsePIDs reads one pid per line, skipping anything else.
func parsePIDs(out []byte) []int {
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if n, err := strconv.Atoi(f); err == nil && n > 1 {
			pids = append(pids, n)
		}
	}
	return pids
}

// Started reports whether a process was started with pidFile since the
// file was last cleared, whether or not it still runs: Start removes the
// pid file before the launch, the launched shell writes it before anything
// else, and only Stop removes it afterwards. After a link that dropped
// during Start, this, not Alive, says whether to start again: a process
// that started and already ended (a short sweep, a server that crashed at
// once) must not be started a second time beside its own records.
func Started(ctx context.Context, h Host, pidFile string) (bool, error) {
	_, ok, err := readPID(ctx, h, pidFile)
	return ok, err
}

// Alive reports whether the process group named by pidFile on h still has a
// live process. A missing pid file is not alive.
//
// It is one command on the host (aliveCmd), and it reads the whole process
// table only when the group's leader is gone: a launch looks at every
// health poll and every turn of following its sweep, and a command that
// read the pid file, then a second that read every process's stat file,
// were most of what a launch on a quiet host cost its CPU.
func Alive(ctx context.Context, h Host, pidFile string) (bool, error) {
	out, _, err := h.Run(ctx, aliveCmd(pidFile))
	if err != nil {
		return false, fmt.Errorf("%s: looking at the process group of %s: %w", h.Name(), pidFile, err)
	}
	return parseAlive(out, h.Name(), pidFile)
}

// aliveCmd runs aliveFn on pidFile.
func aliveCmd(pidFile string) string {
	return groupMembersFn + aliveFn + "alive " + QuotePath(pidFile)
}

// aliveFn is a shell function, `alive FILE`, that prints "pidfile CONTENT"
// when FILE is not empty, then, when CONTENT is a pid, "live" if that
// process (the group's leader) runs and is no zombie, else the group's
// members (membersFn), one a line. A leader that runs is a member, so the
// table would add nothing then.
const aliveFn = `alive() {
  [ -s "$1" ] || return 0
  g=; read -r g < "$1" || :
  echo "pidfile $g"
  case "$g" in ''|*[!0-9]*) return 0 ;; esac
  s=; read -r s 2>/dev/null < "/proc/$g/stat" || :
  r=${s##*) }
  case "$r" in ''|Z*|X*|x*) members ;; *) echo live ;; esac
}
`

// parseAlive reads aliveCmd's answer.
func parseAlive(out []byte, host, pidFile string) (bool, error) {
	var pidText string
	seen := false
	var rest []byte
	for _, line := range strings.Split(string(out), "\n") {
		// Anything a chatty login script printed comes before.
		if t, ok := strings.CutPrefix(strings.TrimSpace(line), "pidfile"); ok && !seen {
			pidText, seen = strings.TrimSpace(t), true
			continue
		}
		if seen {
			rest = append(append(rest, line...), '\n')
		}
	}
	if !seen {
		return false, nil
	}
	if pid, err := strconv.Atoi(pidText); err != nil || pid <= 1 {
		return false, fmt.Errorf("%s: pid file %s holds %q, not a pid", host, pidFile, shorten(pidText, 40))
	}
	return slices.Contains(strings.Fields(string(rest)), "live") || len(parsePIDs(rest)) > 0, nil
}

// Stop ends the process group (and session) named by pidFile on h: SIGTERM
// to every member, up to grace for them to exit, then SIGKILL. Children and
// grandchildren go too, also those that left the group or session while
// the group leader was still alive to name them. A
// missing pid file or a group already gone is not an error. The pid file is
// removed once the group is gone.
//
// It takes two commands on the host whatever the grace: one to read the pid
// file and the process table, one that signals and waits there, looking
// every stopPoll. Each command is an SSH session and a login shell on
// the host, often a second or more under load or with a heavy shell
// profile; a stop that polled from here paid that on every look.
func Stop(ctx context.Context, h Host, pidFile string, grace time.Duration) error {
	_, err := StopReport(ctx, h, pidFile, grace)
	return err
}

// Stopped is what a stop did: the group it signalled, the signals in the
// order sent, and how long the processes took to go after each, as timed
// on the host.
type Stopped struct {
	// PID is the group leader the pid file named; 0 when nothing was
	// running (no pid file, or its group already gone).
	PID int
	// Signals are "TERM", then "KILL" when the grace ran out.
	Signals []string
	// Waits[i] is how long the processes were waited for after Signals[i],
	// by the host's clock, to a hundredth of a second.
	Waits []time.Duration
}

// Killed reports whether the stop needed SIGKILL: the server did not exit
// within the grace after SIGTERM.
func (s Stopped) Killed() bool { return slices.Contains(s.Signals, "KILL") }

// StopReport is Stop, and says what it did.
func StopReport(ctx context.Context, h Host, pidFile string, grace time.Duration) (Stopped, error) {
	pid, t, ok, err := readStopSnapshot(ctx, h, pidFile)
	if err != nil {
		return Stopped{}, err
	}
	if ok {
		// A child that left the group and session (setsid, or a daemonising
		// library) is out of reach of a group kill, yet it may hold GPU
		// memory: SGLang's schedulers can outlive their parent on some --dp
		// paths. Its ancestry is known only while the server lives, so the
		// tree is taken now and its members are stopped with the group.
		tree := descendants(t.rows(), pid)
		if len(t.members(pid)) > 0 || len(stillRunning(t.rows(), tree)) > 0 {
			st, left, err := stopOnHost(ctx, h, pid, t, tree, pidFile, grace)
			st.PID = pid
			if err != nil {
				return st, fmt.Errorf("%s: stopping process group %d (%s): %w", h.Name(), pid, pidFile, err)
			}
			if len(left) > 0 {
				return st, fmt.Errorf("%s: stopping process group %d (%s): processes %v still running %s after SIGKILL",
					h.Name(), pid, pidFile, left, DefaultKillWait)
			}
			return st, nil // stopOnHost removed the pid file
		}
	}
	if _, _, err := h.Run(ctx, removePIDCmd(pidFile)); err != nil {
		return Stopped{}, fmt.Errorf("%s: removing pid file %s: %w", h.Name(), pidFile, err)
	}
	return Stopped{}, nil
}

// stopPoll is how often Stop's command on the host looks whether the
// signalled processes are gone.
const stopPoll = 100 * time.Millisecond

// statTable is the live processes of a host by pid, with their group and
// session.
type statTable map[int]statRow

type statRow struct {
	ppid, pgrp, sid int
	start           string
}

func (t statTable) rows() map[int]procRow {
	out := make(map[int]procRow, len(t))
	for pid, r := range t {
		out[pid] = procRow{ppid: r.ppid, start: r.start}
	}
	return out
}

// members returns the processes of group or session g, and g itself.
func (t statTable) members(g int) []int {
	var out []int
	for pid, r := range t {
		if pid == g || r.pgrp == g || r.sid == g {
			out = append(out, pid)
		}
	}
	sort.Ints(out)
	return out
}

// statScript prints "stat pid ppid pgrp sid starttime" for every live (not
// zombie) process (procsFn).
const statScript = procsFn + statCall

const statCall = `procs "" "" "stat "`

// stopSnapshotCmd prints the pid file (quoted, as the shell reads it) and,
// when it names a pid, the process table.
func stopSnapshotCmd(quotedPIDFile string) string {
	return fmt.Sprintf("if [ -s %[1]s ]; then echo \"pidfile $(cat %[1]s)\"; %[2]s; fi", quotedPIDFile, statScript)
}

// readStopSnapshot reads pidFile and the process table in one command; ok
// is false when the pid file is missing or empty.
func readStopSnapshot(ctx context.Context, h Host, pidFile string) (pid int, t statTable, ok bool, err error) {
	out, _, err := h.Run(ctx, stopSnapshotCmd(QuotePath(pidFile)))
	if err != nil {
		return 0, nil, false, fmt.Errorf("%s: reading pid file %s: %w", h.Name(), pidFile, err)
	}
	t = statTable{}
	var pidText string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 1 && f[0] == "pidfile":
			// Anything a chatty login script printed comes before.
			pidText = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "pidfile"))
		case len(f) == 6 && f[0] == "stat":
			n := make([]int, 4)
			bad := false
			for i := range n {
				n[i], err = strconv.Atoi(f[i+1])
				bad = bad || err != nil
			}
			if !bad {
				t[n[0]] = statRow{ppid: n[1], pgrp: n[2], sid: n[3], start: f[5]}
			}
		}
	}
	if pidText == "" {
		return 0, nil, false, nil
	}
	pid, err = strconv.Atoi(pidText)
	if err != nil || pid <= 1 {
		return 0, nil, false, fmt.Errorf("%s: pid file %s holds %q, not a pid", h.Name(), pidFile, shorten(pidText, 40))
	}
	return pid, t, true, nil
}

// stopOnHost signals group g and the processes of tree still running as
// themselves (same start time: not a newcomer that reused a pid) with
// SIGTERM, waits on the host up to grace for them to be gone, then sends
// SIGKILL and waits up to DefaultKillWait; the pid file goes once they are
// gone. It returns what it sent and the pids still running, if any.
//
// The grace is kept on a loaded host: the script reads the clock from
// /proc/uptime (a builtin read, no fork, a hundredth of a second) and
// checks it between looks, and each look reads only the stat files of the
// processes it signalled, not the whole process table. A look that scanned
// /proc on a host running hundreds of processes beside a busy CPU took
// seconds, and a 3 s grace became 15 s.
//
// Each process gets each signal once: the group kill reaches every member
// of the group, and only the processes outside it (a tree member that left
// it, a session member in a group of its own) are signalled by pid. A
// second SIGTERM is not harmless: llama-server's handler takes it for a
// second Ctrl-C and calls exit() from inside the handler while the first
// shutdown is under way, which can hang until SIGKILL (seen as stops that
// took the whole grace, or returned at once, by chance).
func stopOnHost(ctx context.Context, h Host, g int, t statTable, tree []procID, pidFile string, grace time.Duration) (Stopped, []int, error) {
	var ids, all []string
	for _, id := range tree {
		ids = append(ids, fmt.Sprintf("%d:%s", id.pid, id.start))
	}
	// The members as the snapshot found them, so that the script signals
	// without a pass over /proc of its own first: the group kill reaches a
	// member that joined since, and the looks after find the rest.
	for pid, r := range t {
		if pid == g || r.pgrp == g || r.sid == g || slices.Contains(tree, procID{pid, r.start}) {
			all = append(all, fmt.Sprintf("%d:%s:%d", pid, r.start, r.pgrp))
		}
	}
	sort.Strings(all)
	script := fmt.Sprintf("g=%d; tree=%s; all=%s; grace=%d; killwait=%d; poll=%s; pidfile=%s\n",
		g, Quote(strings.Join(ids, " ")), Quote(strings.Join(all, " ")), centis(grace), centis(DefaultKillWait),
		Quote(fmt.Sprintf("%.2f", stopPoll.Seconds())), QuotePath(pidFile)) + stopScript
	out, _, err := h.Run(ctx, script)
	if err != nil {
		return Stopped{}, nil, err
	}
	var st Stopped
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[0] == "sent":
			st.Signals = append(st.Signals, f[1])
		case len(f) == 2 && f[0] == "waited":
			if n, err := strconv.Atoi(f[1]); err == nil {
				st.Waits = append(st.Waits, time.Duration(n)*10*time.Millisecond)
			}
		}
	}
	line := lastLine(out)
	if !strings.HasPrefix(line, "left") {
		return st, nil, fmt.Errorf("unexpected output %q", shorten(line, 80))
	}
	return st, parsePIDs([]byte(strings.TrimPrefix(line, "left"))), nil
}

// centis is d in hundredths of a second, rounded up: the host clock's unit.
func centis(d time.Duration) int64 {
	return int64((d + 10*time.Millisecond - 1) / (10 * time.Millisecond))
}

// stopScript is stopOnHost's command on the host, after the line that sets
// g (the group), tree (pid:starttime of the descendants outside it), all
// (the members found by the snapshot), grace and killwait (hundredths of a
// second), poll (seconds) and pidfile.
//
// A member is pid:starttime:pgrp; all holds the members not yet seen gone.
// Only the look that finds them all gone passes over /proc, for members
// that joined meanwhile; the looks before it read one stat file per member.
// After SIGKILL, a member found by that pass is killed at once.
const stopScript = procsFn + stopBody

const stopBody = `now() {
  if read -r up _ 2>/dev/null </proc/uptime; then t=$(( ${up%%.*} * 100 + 1${up#*.} - 100 ))
  else t=$(( $(date +%s) * 100 )); fi
}
scan() {
  all=$(procs "$g" "$tree" "" | while read -r p _ pg _ st; do printf ' %s' "$p:$st:$pg"; done)
}
still() {
  kept=
  for e in $all; do
    p=${e%%:*}; r=${e#*:}; st=${r%%:*}
    s=
    read -r s 2>/dev/null <"/proc/$p/stat" || continue
    r=${s##*) }
    set -- $r
    case "$1" in Z|X|x) continue ;; esac
    if [ "${20}" = "$st" ]; then kept="$kept $e"; fi
  done
  all=$kept
}
outside() {
  for e in $all; do
    if [ "${e##*:}" != "$g" ]; then kill -s "$1" "${e%%:*}" 2>/dev/null; fi
  done
}
waitgone() {
  now; start=$t; end=$((t + $1))
  while :; do
    still
    if [ -z "$all" ]; then
      scan
      if [ -z "$all" ]; then break; fi
      if [ -n "$2" ]; then kill -s "$2" -- "-$g" 2>/dev/null; outside "$2"; fi
    fi
    now; if [ "$t" -ge "$end" ]; then break; fi
    sleep "$poll"
  done
  now; echo "waited $((t - start))"
}
kill -s TERM -- "-$g" 2>/dev/null; outside TERM; echo "sent TERM"
waitgone "$grace"
if [ -n "$all" ]; then
  kill -s KILL -- "-$g" 2>/dev/null; outside KILL; echo "sent KILL"
  waitgone "$killwait" KILL
fi
left=
for e in $all; do left="$left ${e%%:*}"; done
if [ -z "$left" ]; then rm -f "$pidfile"; fi
echo "left" $left`

// termThenKill sends TERM, waits up to grace for members to come back empty,
// sends KILL, and waits up to DefaultKillWait again.
func termThenKill(ctx context.Context, members func(context.Context) ([]int, error), signal func(context.Context, string) error, grace time.Duration) error {
	left, err := members(ctx)
	if err != nil || len(left) == 0 {
		return err
	}
	if err := signal(ctx, "TERM"); err != nil {
		return fmt.Errorf("sending SIGTERM: %w", err)
	}
	if left, err = waitGone(ctx, members, grace); err != nil || len(left) == 0 {
		return err
	}
	if err := signal(ctx, "KILL"); err != nil {
		return fmt.Errorf("sending SIGKILL: %w", err)
	}
	if left, err = waitGone(ctx, members, DefaultKillWait); err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("processes %v still running %s after SIGKILL", left, DefaultKillWait)
	}
	return nil
}

// waitGone polls members until it is empty or d has passed, and returns
// what is left.
func waitGone(ctx context.Context, members func(context.Context) ([]int, error), d time.Duration) ([]int, error) {
	deadline := time.Now().Add(d)
	for {
		left, err := members(ctx)
		if err != nil || len(left) == 0 || !time.Now().Before(deadline) {
			return left, err
		}
		select {
		case <-ctx.Done():
			return left, ctx.Err()
		case <-time.After(min(DefaultStopPoll, time.Until(deadline))):
		}
	}
}

// minStopPattern is the shortest pattern StopMatching accepts; anything
// shorter matches half the host.
const minStopPattern = 3

// StopMatching stops the processes on h whose full command line contains
// pattern, a fixed string (not a regular expression), as `pgrep -f` would
// find them: for servers left from an earlier run whose pid file is gone.
// Each gets SIGTERM, up to grace to exit, then SIGKILL. It returns the pids it
// signalled, sorted.
func StopMatching(ctx context.Context, h Host, pattern string, grace time.Duration) ([]int, error) {
	if len(pattern) < minStopPattern {
		return nil, fmt.Errorf("%s: stopping processes matching %q: pattern shorter than %d bytes", h.Name(), pattern, minStopPattern)
	}
	if strings.ContainsRune(pattern, 0) || strings.ContainsRune(pattern, '\n') {
		return nil, errors.New(h.Name() + ": stopping processes: pattern holds a NUL or newline")
	}
	// The pattern goes into the script one quoted byte at a time, so the
	// shell running it (and every subshell it forks, which share its command
	// line) never matches the pattern itself.
	var lit strings.Builder
	for i := 0; i < len(pattern); i++ {
		if pattern[i] == '\'' {
			lit.WriteString(`"'"`)
		} else {
			lit.WriteString("'" + pattern[i:i+1] + "'")
		}
	}
	find := fmt.Sprintf(`P=%s
if ps -e -o pid= -o args= >/dev/null 2>&1; then
  ps -e -o pid= -o args= | while read -r pid args; do
    case "$args" in *"$P"*) [ "$pid" != "$$" ] && echo "$pid" ;; esac
  done
else
  for d in /proc/[0-9]*; do
    args=$(tr '\000' ' ' < "$d/cmdline" 2>/dev/null) || continue
    pid=${d#/proc/}
    case "$args" in *"$P"*) [ "$pid" != "$$" ] && echo "$pid" ;; esac
  done
fi
true`, lit.String())
	members := func(ctx context.Context) ([]int, error) {
		out, _, err := h.Run(ctx, find)
		if err != nil {
			return nil, fmt.Errorf("listing processes: %w", err)
		}
		return parsePIDs(out), nil
	}
	found, err := members(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: stopping processes matching %q: %w", h.Name(), pattern, err)
	}
	if len(found) == 0 {
		return nil, nil
	}
	sort.Ints(found)
	// Only the processes found first are signalled; one that starts later
	// and matches is left alone, but still waited for.
	signal := func(ctx context.Context, s string) error {
		var b strings.Builder
		for _, p := range found {
			fmt.Fprintf(&b, "kill -s %s %d 2>/dev/null; ", s, p)
		}
		b.WriteString("true")
		_, _, err := h.Run(ctx, b.String())
		return err
	}
	alive := func(ctx context.Context) ([]int, error) {
		m, err := members(ctx)
		if err != nil {
			return nil, err
		}
		return intersect(found, m), nil
	}
	if err := termThenKill(ctx, alive, signal, grace); err != nil {
		return found, fmt.Errorf("%s: stopping processes matching %q: %w", h.Name(), pattern, err)
	}
	return found, nil
}

// intersect returns the members of a that are also in b.
func intersect(a, b []int) []int {
	in := make(map[int]bool, len(b))
	for _, x := range b {
		in[x] = true
	}
	var out []int
	for _, x := range a {
		if in[x] {
			out = append(out, x)
		}
	}
	return out
}
