package main

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/placement"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/report"
)

// The dry run's listing: what a person reads before letting a campaign
// loose on a shared host. First a summary (the hosts, the launches round
// by round, the expected time, what a stop does and the GPU memory wait),
// then every command in order. A launch that differs from its scenario's
// first only in its round is named, not repeated; a phase whose commands
// an earlier one already showed says which; a script remote sends inside
// many commands (the /proc scan, the stop script, the start wrapper) is
// printed whole the first time and named after. Lines that begin with "$ "
// are commands as sent; "# if …:" marks a command a live host runs only
// on that condition.

// dryPrinter writes a listing, remembering what it already showed.
type dryPrinter struct {
	w io.Writer
	c *campaign.Campaign
	// shown is the host whose commands the listing shows (Plan.Shown);
	// another host's are prompted with its name.
	shown string
	// helpers maps a script (tag and text) to its reference, "stop-1";
	// counts numbers each tag's scripts.
	helpers map[string]string
	counts  map[string]int
	// blocks maps a phase's commands to where they were first shown.
	blocks map[string]string
	// firsts is each scenario's first launch shown in full.
	firsts map[string]*dryLaunch
}

// writeDryListing prints the dry run of campaign c, placed as where says,
// from what it recorded.
func writeDryListing(w io.Writer, c *campaign.Campaign, where placement.Plan, n night, l dryListing) {
	p := &dryPrinter{w: w, c: c, shown: where.Shown, helpers: map[string]string{}, counts: map[string]int{}, blocks: map[string]string{},
		firsts: map[string]*dryLaunch{}}
	p.summary(c, where, n, l)
	if len(l.before) > 0 {
		fmt.Fprintln(w, "\n## Before the first launch")
		for _, b := range l.before {
			p.block(b, "", "")
		}
	}
	out := map[int]orchestrator.Event{}
	var rounds []int
	for _, ev := range l.outOfTime {
		out[ev.Round] = ev
		rounds = append(rounds, ev.Round)
	}
	byRound := map[int][]*dryLaunch{}
	for _, la := range l.launches {
		if _, ok := byRound[la.round]; !ok {
			rounds = append(rounds, la.round)
		}
		byRound[la.round] = append(byRound[la.round], la)
	}
	slices.Sort(rounds)
	rounds = slices.Compact(rounds)
	for i := 0; i < len(rounds); i++ {
		r := rounds[i]
		ev, ok := out[r]
		if !ok {
			fmt.Fprintf(w, "\n## Round %d\n", r)
			for _, la := range byRound[r] {
				p.launch(la)
			}
			continue
		}
		// Rounds left out one after another are one heading, with the
		// first one's reason: the later ones fit no better.
		j := i
		for j+1 < len(rounds) && rounds[j+1] == rounds[j]+1 && hasRound(out, rounds[j+1]) {
			j++
		}
		head := fmt.Sprintf("Round %d", r)
		if j > i {
			head = fmt.Sprintf("Rounds %d to %d", r, rounds[j])
		}
		fmt.Fprintf(w, "\n## %s: left out, not started for lack of time\n%s\n", head, outOfTimeReason(ev))
		i = j
	}
	if len(l.after) > 0 {
		fmt.Fprintln(w, "\n## After the last launch")
		for _, b := range l.after {
			p.block(b, "release", "")
		}
	}
}

// hasRound reports whether round r was left out for time.
func hasRound(out map[int]orchestrator.Event, r int) bool {
	_, ok := out[r]
	return ok
}

// outOfTimeReason is why a round was left out, as the orchestrator says
// it, less the round's name; in a dry run the launches before it are the
// ones it expected, each taking the expected time.
func outOfTimeReason(ev orchestrator.Event) string {
	msg := ev.Message
	if _, after, ok := strings.Cut(msg, " not started: "); ok {
		msg = after
	}
	return strings.Replace(msg, " finished launches)", " launches before it, each the expected time in a dry run)", 1)
}

// dryWidth is the width the listing's summary is folded to: the commands
// below it are never folded, since they must read as sent.
const dryWidth = 110

// para writes a summary item: its label, then text folded under it.
func (p *dryPrinter) para(label, text string) {
	for _, l := range report.Fold(text, dryWidth, fmt.Sprintf("%-10s", label), strings.Repeat(" ", 10)) {
		fmt.Fprintln(p.w, l)
	}
}

// summary writes the listing's head: where, which launches, how long,
// what a stop and the GPU memory wait do, and the lock.
func (p *dryPrinter) summary(c *campaign.Campaign, where placement.Plan, n night, l dryListing) {
	w := p.w
	fmt.Fprintf(w, "# Dry run of campaign %s: nothing is executed on any host.\n", c.Name)
	fmt.Fprintln(w, "# What a run would do, then every command it would send (\"$ \"), each launch's once.")
	fmt.Fprintln(w)
	hosts := where.Where
	if where.Hosts > 1 {
		hosts += fmt.Sprintf("; %s at once, each taking the next round when free", placesWord(c, where.Hosts))
	}
	p.para("hosts", fmt.Sprintf("%s; workdir %s", hosts, c.Host.Workdir))
	if c.GPU.None {
		p.para("", "no GPU (gpu: none): no wait for free GPU memory, no GPU facts, no power sampler")
	}
	p.launches(c, where, l)
	labels, lines := spaceLines(c)
	for i, line := range lines {
		p.para(labels[i], line)
	}

	over := ""
	if where.Hosts > 1 {
		over = fmt.Sprintf(", over %s at once", placesWord(c, where.Hosts))
	}
	p.para("time", fmt.Sprintf("about %s expected for the %s%s", fmtDur(l.end.Sub(l.start).Round(time.Minute)),
		launchesWord(len(l.launches)), over))
	p.para("", n.costs())
	p.para("", waitsShown(c, serialLaunches(c)))
	p.para("plan", n.head())
	if c.Budget > 0 || c.Deadline != nil {
		p.para("budget", budgetLine(c, l))
	}

	p.para("stops", fmt.Sprintf("each stop reads a pid file and, if it names a running process group, sends SIGTERM to the group "+
		"and to each of its descendants that left it, waits up to %s (engine.stop_grace) for all to exit, then sends SIGKILL "+
		"and waits up to %s more; the pid file is removed once they are gone. The stop script below takes its grace and "+
		"killwait in hundredths of a second; pids from %d on stand for those the pid files would hold.",
		fmtDur(c.Engine.StopGrace), fmtDur(remote.DefaultKillWait), remote.DryStandInPID))
	if len(l.launches) > 0 {
		for _, b := range l.launches[0].blocks {
			var files []string
			for _, r := range b.recs {
				if r.Stops != "" && r.If == "" {
					files = append(files, r.Stops)
				}
			}
			if len(files) > 0 {
				p.para("", fmt.Sprintf("%-11s %s", b.phase, strings.Join(files, ", ")))
			}
		}
	}
	if !c.GPU.None {
		then := "then the launch fails, naming the processes that hold the memory (gpu.kill_strays: false)"
		if c.GPU.KillStrays {
			then = fmt.Sprintf("then each process still holding memory gets SIGTERM, up to %s to exit, then SIGKILL, and the wait "+
				"runs once more (gpu.kill_strays)", fmtDur(remote.DefaultStrayGrace))
		}
		p.para("gpu", fmt.Sprintf("before each launch and after it, a wait until every GPU uses at most %d MiB "+
			"(gpu.max_used_mib) and no compute process is left: nvidia-smi every %s, up to %s (gpu.wait_timeout); %s",
			c.GPU.MaxUsedMiB, fmtDur(gpuPoll(c)), fmtDur(c.GPU.WaitTimeout), then))
	}
	p.para("lock", "taken before the first launch (a run is refused while another campaign's lock is there; one whose "+
		"holder is a dead process on this machine is taken over), removed after the last launch if it still names this run")
}

// launches lists the launches round by round, and the rounds left out.
func (p *dryPrinter) launches(c *campaign.Campaign, where placement.Plan, l dryListing) {
	var rounds []int
	names := map[int][]string{}
	for _, la := range l.launches {
		if _, ok := names[la.round]; !ok {
			rounds = append(rounds, la.round)
		}
		names[la.round] = append(names[la.round], la.scenario)
	}
	for _, ev := range l.outOfTime {
		rounds = append(rounds, ev.Round)
	}
	slices.Sort(rounds)
	if len(l.launches) == 0 {
		p.para("launches", "none: every round is left out for lack of time (below)")
	} else {
		p.para("launches", fmt.Sprintf("%d in %s, in this order:", len(l.launches), plural(len(names), "round")))
	}
	for _, r := range slices.Compact(rounds) {
		if n, ok := names[r]; ok {
			p.para("", fmt.Sprintf("  round %d: %s", r, strings.Join(n, ", ")))
		} else {
			p.para("", fmt.Sprintf("  round %d: left out for lack of time", r))
		}
	}
	if c.Sequential() {
		p.para("", fmt.Sprintf("sequential: after round %d a variant whose comparisons are all decided is launched no more; "+
			"shown: every round up to %d", c.MinRounds, c.Rounds))
	}
	if hosts := max(where.Hosts, 1); hosts > 1 && c.Layout(hosts).Replicates != nil {
		p.para("", fmt.Sprintf("over %d hosts each round is split into parts, each with its own baseline launch "+
			"(%d launches in all); shown whole", hosts, c.Layout(hosts).Launches()))
	}
}

// launchesWord is "1 launch" or "N launches".
func launchesWord(n int) string {
	if n == 1 {
		return "1 launch"
	}
	return fmt.Sprintf("%d launches", n)
}

// budgetLine says which rounds the budget or deadline leaves out.
func budgetLine(c *campaign.Campaign, l dryListing) string {
	var left []int
	for _, ev := range l.outOfTime {
		left = append(left, ev.Round)
	}
	switch {
	case len(left) == 0:
		return budgetName(c) + ": every round fits, each launch taking the expected time"
	case len(l.launches) == 0:
		return budgetName(c) + ": no round fits, so a run would launch nothing"
	}
	return fmt.Sprintf("%s: %s left out, not started for lack of time (below)", budgetName(c), roundList(left))
}

// gpuPoll is how often the GPU wait reads nvidia-smi (the orchestrator's
// waitGPUFree).
func gpuPoll(c *campaign.Campaign) time.Duration {
	return min(orchestrator.DefaultGPUPoll, c.Engine.PollInterval)
}

// launchID names a launch for references: "baseline-1".
func launchID(la *dryLaunch) string { return la.scenario + "-" + strconv.Itoa(la.round) }

// launch writes one launch: by reference to its scenario's first launch
// when it differs from it only in its round, else each phase.
func (p *dryPrinter) launch(la *dryLaunch) {
	head := fmt.Sprintf("\n### %s: launch %d of %d", la.scenario, la.index, la.total)
	if first, ok := p.firsts[la.scenario]; ok && sameLaunch(first, la) {
		fmt.Fprintf(p.w, "%s: the commands of #%s with BAKEOFF_ROUND=%d BAKEOFF_LAUNCH=%d, results in round-%d\n",
			head, launchID(first), la.round, la.index-1, la.round)
		return
	}
	if _, ok := p.firsts[la.scenario]; !ok {
		p.firsts[la.scenario] = la
	}
	fmt.Fprintf(p.w, "%s (#%s)\n", head, launchID(la))
	for _, b := range la.blocks {
		p.block(b, "", launchID(la))
	}
}

// sameLaunch reports whether b runs a's commands but for its round: the
// round and launch position in the server's environment and the round's
// results directory.
func sameLaunch(a, b *dryLaunch) bool {
	if len(a.blocks) != len(b.blocks) {
		return false
	}
	for i := range a.blocks {
		if a.blocks[i].phase != b.blocks[i].phase || blockKey(a.blocks[i], a) != blockKey(b.blocks[i], b) {
			return false
		}
	}
	return true
}

// blockKey is a phase's commands, with la's round and position left out
// when la is given.
func blockKey(b *dryBlock, la *dryLaunch) string {
	var k strings.Builder
	for _, r := range b.recs {
		fmt.Fprintf(&k, "%s\x00%s\x00%s\x00", r.Host, r.If, r.Line)
	}
	for _, m := range b.warnings {
		fmt.Fprintf(&k, "warning\x00%s\x00", m)
	}
	fmt.Fprintf(&k, "failed\x00%s", b.failed)
	if la == nil {
		return k.String()
	}
	s := k.String()
	for _, v := range []struct{ re, to string }{
		{`\b` + orchestrator.EnvRound + `=` + strconv.Itoa(la.round) + `\b`, orchestrator.EnvRound + "=K"},
		{`\b` + orchestrator.EnvLaunch + `=` + strconv.Itoa(la.index-1) + `\b`, orchestrator.EnvLaunch + "=N"},
		{`/round-` + strconv.Itoa(la.round) + `/`, "/round-K/"},
	} {
		s = regexp.MustCompile(v.re).ReplaceAllString(s, v.to)
	}
	return s
}

// block writes a phase's commands under its name (or label, for records
// outside any phase), or names where the same commands were shown.
func (p *dryPrinter) block(b *dryBlock, label, launch string) {
	w := p.w
	name := string(b.phase)
	if name == "" {
		name = label
	}
	prompt := "$ "
	switch {
	case b.on != "":
		name, prompt = "on "+b.on, b.host+"$ "
	case launch != "" && len(b.recs) > 0:
		key := blockKey(b, nil)
		if where, ok := p.blocks[key]; ok {
			fmt.Fprintf(w, "\n%s: the same commands as %s\n", name, where)
			return
		}
		p.blocks[key] = fmt.Sprintf("%s in #%s", name, launch)
	}
	if name != "" {
		fmt.Fprintf(w, "\n%s\n", name)
	} else {
		fmt.Fprintln(w)
	}
	for _, r := range b.recs {
		if b.on == "" && r.Host != p.shown {
			// Another host of the launch (a node of a launch over
			// several) names itself.
			p.record(r.DryRecord, r.Host+"$ ")
			continue
		}
		p.record(r.DryRecord, prompt)
	}
	switch {
	case len(b.recs) == 0:
	case b.phase == orchestrator.StepReady:
		fmt.Fprintf(w, "  # again every %s (engine.poll_interval) until it answers, up to %s (engine.health_timeout)\n",
			fmtDur(p.c.Engine.PollInterval), fmtDur(p.c.Engine.HealthTimeout))
	case b.phase == orchestrator.StepSweep:
		fmt.Fprintf(w, "  # while the sweep runs, every %s: its pid file and group as above, then the server's; if the server is\n", fmtDur(orchestrator.DefaultSweepPoll))
		fmt.Fprintln(w, "  # gone, the sweep is stopped as in stop below and the launch fails")
	case b.phase == orchestrator.StepGPUFree || b.phase == orchestrator.StepGPUFreeAfter:
		fmt.Fprintf(w, "  # again every %s until the GPUs are free, up to %s (gpu above)\n", fmtDur(gpuPoll(p.c)), fmtDur(p.c.GPU.WaitTimeout))
	}
	for _, m := range b.warnings {
		fmt.Fprintln(w, "  # warning: "+m)
	}
	if b.failed != "" {
		fmt.Fprintf(w, "  # %s would fail: %s\n", name, b.failed)
	}
}

// record writes one command, indented under its phase, and under its
// condition when it has one.
func (p *dryPrinter) record(r remote.DryRecord, prompt string) {
	indent := "  "
	if r.If != "" {
		fmt.Fprintf(p.w, "  # %s:\n", r.If)
		indent = "    "
	}
	if r.Start != nil {
		p.start(r, indent+prompt)
		return
	}
	line := r.Line
	var defs []remote.DryHelper
	for _, h := range r.Helpers {
		ref, first := p.helper(h.Tag, h.Text)
		mark := fmt.Sprintf("<%s, #%s below>", h.Name, ref)
		if !first {
			mark = fmt.Sprintf("<same %s as above, #%s>", strings.TrimPrefix(h.Name, "the "), ref)
		} else {
			defs = append(defs, remote.DryHelper{Tag: ref, Name: h.Name, Text: h.Text})
		}
		if strings.HasSuffix(h.Text, "\n") {
			mark += "\n"
		}
		line = strings.Replace(line, h.Text, mark, 1)
	}
	p.lines(indent, prompt, line)
	for _, d := range defs {
		fmt.Fprintf(p.w, "%s    #%s, %s:\n", indent, d.Tag, d.Name)
		for _, l := range strings.Split(strings.TrimSuffix(d.Text, "\n"), "\n") {
			fmt.Fprintf(p.w, "%s    %s\n", indent, l)
		}
	}
}

// helper is the reference of a shared script, and whether this is its
// first showing.
func (p *dryPrinter) helper(tag, text string) (string, bool) {
	key := tag + "\x00" + text
	if ref, ok := p.helpers[key]; ok {
		return ref, false
	}
	p.counts[tag]++
	ref := fmt.Sprintf("%s-%d", tag, p.counts[tag])
	p.helpers[key] = ref
	return ref, true
}

// lines writes a command: its first line after the prompt, the others
// indented under it.
func (p *dryPrinter) lines(indent, prompt, cmd string) {
	ls := strings.Split(cmd, "\n")
	fmt.Fprintf(p.w, "%s%s%s\n", indent, prompt, ls[0])
	for _, l := range ls[1:] {
		fmt.Fprintf(p.w, "%s    %s\n", indent, l)
	}
}

// start writes a detached start: what it starts, where its pid, output
// and exit status go, and the wrapper script, whole the first time.
func (p *dryPrinter) start(r remote.DryRecord, lead string) {
	s := r.Start.Spec
	where := fmt.Sprintf("pid file %s, output to %s", s.PIDFile, s.LogFile)
	if s.Dir != "" {
		where += ", in " + s.Dir
	}
	if s.ExitFile != "" {
		where += ", exit status to " + s.ExitFile
	}
	indent := strings.TrimSuffix(lead, strings.TrimLeft(lead, " "))
	ref, first := p.helper("start", r.Start.Wrapper)
	fmt.Fprintf(p.w, "%s# start detached (setsid), %s:\n", indent, where)
	fmt.Fprintf(p.w, "%s#   %s\n", indent, s.Command)
	if !first {
		fmt.Fprintf(p.w, "%s# by the same start wrapper as above (#%s)\n", indent, ref)
		return
	}
	fmt.Fprintf(p.w, "%s# by the start wrapper #%s:\n", indent, ref)
	p.lines(indent, strings.TrimPrefix(lead, indent), r.Line)
}
