package orchestrator

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/internal/pause"
	"github.com/bakeoff-dev/bakeoff/preflight"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// A deployment (campaign.Deployment) is one launch made of several
// processes: its roles' instances, each on a node of the launch's hosts,
// with its own pid file, log and port. The lifecycle's steps are the same
// for it as for one server; each step that touches the server touches every
// process here:
//
//	launch   every instance rendered, every port checked, the first wave started
//	ready    each wave's instances ready (their own health, or alive for
//	         health: none) before the next wave starts; any instance that
//	         dies or logs a fatal line fails the launch, naming it
//	smoke, sweep, collect
//	         against the role deployment.serve names; a process that dies
//	         meanwhile fails the launch, naming it
//	stop     the sweep, then the instances in the reverse of their start
//	save-log every instance's log into roles/NAME/server.log

// deployRun is the processes of one launch of a deployment.
type deployRun struct {
	procs []*roleProc // in campaign.Deployment.Instances order
	waves [][]*roleProc
	serve *roleProc
	// figures is the instance the engine's figures are read from
	// (campaign.Deployment.Figures' instance 0): serve, or an engine
	// behind it when serve is a router, which serves none.
	figures *roleProc
	// dead is the first instance found dead, which deadProc keeps naming:
	// see there.
	dead *roleProc
}

// roleProc is one instance of a role in a launch.
type roleProc struct {
	in   campaign.Instance
	name string  // the instance's name: ROLE, or ROLE.INDEX
	node *worker // the host it runs on
	// pidFile and log are its files on its host: the pid file's name is
	// fixed by the instance (server-NAME.pid), so that a later stop-old
	// finds it whatever the launch.
	pidFile, log string
	launch       *campaign.Launch
	profile      *engine.Profile
	client       *http.Client // dials through its host
	url          string       // http://ADDRESS:PORT as its host reaches it
	health       string       // the path polled; "" for health: none
	readyLine    string
	offset       int64
	scan         lineScanner
	started      bool
	ready        bool
	readySeen    bool
	lastProbe    string // what the last health probe got, for a timeout's reason
	// watchHCA says its log is watched for its KV transfer engine's word
	// that it found no RDMA device (rdma.go); sawHCA that it was seen.
	watchHCA, sawHCA bool
}

// rolePIDPrefix starts every instance's pid file in the workdir: stop-old
// stops what each names.
const rolePIDPrefix = "server-"

// rolesDir holds each instance's files in a launch's results directory:
// roles/NAME/server.log, roles/NAME/metrics/.
const rolesDir = "roles"

// newDeployRun lays out the launch of a deployment scenario on its worker.
func (s *scenarioRun) newDeployRun() *deployRun {
	o, sc := s.o, s.sc
	dep := sc.Deployment
	insts := dep.Instances(o.c.Engine.Port, s.w.slot)
	addr := s.w.addresses(sc.NodesPerLaunch())
	d := &deployRun{}
	byRole := map[string][]*roleProc{}
	for _, in := range insts {
		n := s.w.node(in.Node)
		rs := sc.RoleScenario(in.Role)
		p := &roleProc{in: in, name: in.Name(), node: n, profile: rs.Profile(),
			pidFile: path.Join(n.paths.workdir, rolePIDPrefix+n.paths.slotTag+in.Name()+".pid"),
			log:     path.Join(n.paths.logs, sc.Name+"."+in.Name()+".log"),
			client:  hostHTTPClient(n.h),
			url:     "http://" + net.JoinHostPort(addr(in.Node), strconv.Itoa(in.Port))}
		if p.profile == nil {
			p.profile = s.profile
		}
		p.watchHCA = watchesNoHCA(o.c, rs)
		switch in.Role.Health {
		case campaign.HealthNone:
		case "":
			p.health = o.c.Engine.HealthPath
		default:
			p.health = in.Role.Health
		}
		p.readyLine = p.profile.ReadyLine
		if o.c.Engine.ReadyLine != "" && rs.Engine == sc.Engine {
			p.readyLine = o.c.Engine.ReadyLine
		}
		d.procs = append(d.procs, p)
		byRole[in.Role.Name] = append(byRole[in.Role.Name], p)
		if in.Role.Name == dep.Serve && in.Index == 0 {
			d.serve = p
		}
		if in.Role.Name == dep.Figures && in.Index == 0 {
			d.figures = p
		}
	}
	for _, wave := range sc.StartOrder() {
		var ps []*roleProc
		for _, r := range wave {
			ps = append(ps, byRole[r.Name]...)
		}
		d.waves = append(d.waves, ps)
	}
	return d
}

// launchDeployment renders every instance, refuses a port something already
// answers on, creates the logs and starts the first wave.
func launchDeployment(ctx context.Context, s *scenarioRun) error {
	o, d := s.o, s.dep
	sc := *s.sc
	sc.Env = maps.Clone(s.sc.Env)
	if sc.Env == nil {
		sc.Env = map[string]string{}
	}
	sc.Env[EnvRound] = strconv.Itoa(s.round)
	sc.Env[EnvLaunch] = strconv.Itoa(s.pos)
	insts := make([]campaign.Instance, len(d.procs))
	for i, p := range d.procs {
		insts[i] = p.in
	}
	addr := s.w.addresses(sc.NodesPerLaunch())
	var shown []string
	for i, p := range d.procs {
		on := campaign.On{Bakeoff: p.node.hostBakeoff, Workdir: p.node.paths.workdir}
		l, err := campaign.RenderInstance(o.c, &sc, insts, i, s.w.slot, on, addr)
		if err != nil {
			return err
		}
		p.launch = l
		shown = append(shown, fmt.Sprintf("%s on %s: %s", p.name, p.node.h.Name(), l.Command))
	}
	s.result.Launch = strings.Join(shown, "\n")
	// Whatever answers on an instance's port now is not this launch's: a
	// stranger there would be measured, or take the instance's place.
	for _, p := range d.procs {
		if dr, ok := p.node.h.(dryRunner); ok && dr.RunsNothing() {
			// A dry host answers every port while one of its servers
			// runs: beside another slot's launch it would answer this one.
			continue
		}
		hostport := strings.TrimPrefix(p.url, "http://")
		if conn, err := p.node.h.Dial(ctx, "tcp", hostport); err == nil {
			conn.Close()
			return s.fail(StepLaunch, fmt.Sprintf("port %d on %s (role %s) is already in use by a process this campaign did not start; stop it or give the role another port",
				p.in.Port, p.node.h.Name(), p.name), "", nil)
		}
	}
	// Fresh logs, one command per host, so the ready phase reads only this
	// launch's lines; the directories the engines need first.
	for _, n := range s.w.nodes() {
		fresh := fmt.Sprintf("umask 077 && mkdir -p %s", campaign.ShellQuote(n.paths.logs))
		mine := false
		for _, p := range d.procs {
			if p.node != n {
				continue
			}
			mine = true
			fresh += " && : > " + campaign.ShellQuote(p.log)
			for _, dir := range p.launch.Dirs {
				fresh += " && mkdir -p " + campaign.ShellQuote(dir)
			}
		}
		if !mine {
			continue
		}
		err := n.overLink(ctx, s.sc.Name, "creating the role logs", func(ctx context.Context) error {
			_, _, err := n.h.Run(ctx, fresh)
			return err
		})
		if err != nil {
			return fmt.Errorf("creating the logs of %s on %s: %w", s.sc.Name, n.h.Name(), err)
		}
	}
	return s.startWave(ctx, d.waves[0])
}

// startWave starts a wave's instances, detached, each with its own log and
// pid file.
func (s *scenarioRun) startWave(ctx context.Context, wave []*roleProc) error {
	for _, p := range wave {
		p.offset, p.scan = 0, lineScanner{}
		err := p.node.startOverLink(ctx, s.sc.Name, remote.ProcessSpec{Command: p.launch.Command, Dir: p.node.paths.workdir,
			LogFile: p.log, PIDFile: p.pidFile})
		if err != nil {
			return fmt.Errorf("launching role %s of %s on %s: %w", p.name, s.sc.Name, p.node.h.Name(), err)
		}
		p.started = true
		s.event(Event{Kind: EventWaiting, Phase: StepLaunch, Message: fmt.Sprintf("%s started on %s, log %s", p.name, p.node.h.Name(), p.log)})
	}
	return nil
}

// readyDeployment waits for each wave to be ready, starting the next wave
// once it is: a router starts once its workers answer, since it may give up
// on workers that take longer to load than its own startup timeout (SGLang's
// router: --worker-startup-timeout-secs, 1800 by default (600 before);
// sgl-project/sglang sgl-model-gateway/bindings/python/src/sglang_router/router_args.py).
// Meanwhile every started instance is watched: its new log lines (a fatal
// one fails the launch), its process group (gone fails it). Each wave has
// the health timeout.
func readyDeployment(ctx context.Context, s *scenarioRun) error {
	o, d := s.o, s.dep
	for i, wave := range d.waves {
		if i > 0 {
			if err := s.startWave(ctx, wave); err != nil {
				return err
			}
		}
		deadline := o.now().Add(o.c.Engine.HealthTimeout)
		for {
			if err := s.watchProcs(ctx, StepReady, "server failed while loading", "server exited while loading"); err != nil {
				return err
			}
			waiting := s.probeWave(ctx, wave)
			if waiting == nil {
				break
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !o.now().Before(deadline) {
				return s.failProc(waiting, StepReady, fmt.Sprintf("not ready after %s (%s)", o.c.Engine.HealthTimeout, waiting.lastProbe),
					s.procLog(context.WithoutCancel(ctx), waiting, DefaultLogTailLines))
			}
			if err := pause.For(ctx, o.c.Engine.PollInterval); err != nil {
				return err
			}
		}
	}
	return nil
}

// watchProcs reads every started instance's new log lines and fails on a
// fatal one; then fails when an instance's process group is gone. fatal
// and exited say what happened, for the reason.
func (s *scenarioRun) watchProcs(ctx context.Context, phase StepName, fatal, exited string) error {
	for _, p := range s.dep.procs {
		if !p.started {
			continue
		}
		data, next, err := remote.ReadFrom(ctx, p.node.h, p.log, p.offset, DefaultLogChunk)
		if err != nil {
			if se := s.nodeGone(ctx, p, phase); se != nil {
				return se
			}
			p.node.warn(s.sc.Name, fmt.Sprintf("reading the log of role %s of %s on %s: %v", p.name, s.sc.Name, p.node.h.Name(), err))
			continue
		}
		p.offset = next
		lines := p.scan.feed(data)
		for _, line := range lines {
			if p.profile.FatalLine(line) != "" {
				return s.crashedProc(ctx, p, phase, fatal, nil)
			}
			if p.readyLine != "" && strings.Contains(line, p.readyLine) {
				p.readySeen = true
			}
			if p.watchHCA && !p.sawHCA && saysNoHCA(line) {
				p.sawHCA = true
				s.noHCA(p)
			}
		}
		if n := len(lines); n > 0 {
			s.event(Event{Kind: EventServerLog, Phase: phase, Message: p.name + ": " + lines[n-1]})
		}
	}
	if p := s.deadProc(ctx); p != nil {
		return s.crashedProc(ctx, p, phase, exited, nil)
	}
	return nil
}

// nodeGone asks the watcher about the host of an instance whose log could
// not be read, and fails the launch when the host is lost. Without it a
// node lost while the deployment loads holds the launch for the whole
// health timeout (30 minutes by default): its instance's health goes
// through its host, so it never answers, and deadProc takes a host that
// cannot say for one whose process runs; each of those calls also spends
// the SSH host's reconnect attempts. The watcher waits out a link that
// comes back within the link patience, as the fleet's failover does.
func (s *scenarioRun) nodeGone(ctx context.Context, p *roleProc, phase StepName) *ScenarioError {
	err := p.node.watch(ctx)
	if err == nil || ctx.Err() != nil {
		return nil
	}
	se := s.failProc(p, phase, fmt.Sprintf("%s stopped answering: %v", p.node.h.Name(), err), "")
	se.Err = &lostNodeError{node: p.node, err: err}
	return se
}

// lostNodeError is the watcher's word that a node of a launch is lost, as
// the launch got it: the failover takes it rather than asking again, which
// would wait the link patience out a second time.
type lostNodeError struct {
	node *worker
	err  error
}

func (e *lostNodeError) Error() string { return e.node.h.Name() + ": " + e.err.Error() }
func (e *lostNodeError) Unwrap() error { return e.err }

// probeWave asks each instance of a wave not yet ready for its health, and
// returns the first still waiting (nil when the wave is ready). An instance
// with no HTTP face is ready once it runs (watchProcs found it alive).
func (s *scenarioRun) probeWave(ctx context.Context, wave []*roleProc) *roleProc {
	var waiting *roleProc
	for _, p := range wave {
		if p.ready {
			continue
		}
		if p.health == "" {
			p.ready = true
			continue
		}
		status, _, err := get(ctx, p.client, p.url+p.health, DefaultProbeTimeout)
		if err == nil && p.profile.Ready(status, p.readySeen) {
			p.ready = true
			s.event(Event{Kind: EventWaiting, Phase: StepReady, Message: fmt.Sprintf("%s ready on %s", p.name, p.node.h.Name())})
			continue
		}
		p.lastProbe = "no answer from " + p.url + p.health
		if err == nil {
			p.lastProbe = fmt.Sprintf("last status %d from %s", status, p.url+p.health)
		}
		if waiting == nil {
			waiting = p
		}
	}
	return waiting
}

// deadProc returns the first started instance whose process group is gone,
// nil while all run. An instance whose host cannot say is taken to run: a
// dropped link says nothing of the process. Once one is found it is the one
// returned from then on: its peers die of its death (an SGLang rank ends
// --watchdog-timeout after its peer's), and the failure, which asks again
// after stopping the sweep, would otherwise blame the first instance in
// order by then dead (rank 0, whose reason is its peer's NCCL error) rather
// than the one that died first.
func (s *scenarioRun) deadProc(ctx context.Context) *roleProc {
	if s.dep.dead != nil {
		return s.dep.dead
	}
	for _, p := range s.dep.procs {
		if !p.started {
			continue
		}
		if alive, err := remote.Alive(ctx, p.node.h, p.pidFile); err == nil && !alive {
			s.dep.dead = p
			return p
		}
	}
	return nil
}

// serverAlive reports whether the launch's server runs: for a deployment,
// every one of its started processes. false only when a host says a process
// is gone.
func (s *scenarioRun) serverAlive(ctx context.Context) bool {
	if s.dep != nil {
		return s.deadProc(ctx) == nil
	}
	alive, err := remote.Alive(ctx, s.w.h, s.w.paths.serverPID)
	return err != nil || alive
}

// crashedDeployment is crashed for a deployment: the instance to blame is
// the first one found dead (after up to DefaultCrashSettle for one to die,
// as a crash on the first request takes a moment to end its process), else
// the role the load talks to.
func (s *scenarioRun) crashedDeployment(ctx context.Context, phase StepName, what string, err error) *ScenarioError {
	o := s.o
	settle := o.now().Add(DefaultCrashSettle)
	p := s.deadProc(ctx)
	for p == nil && o.now().Before(settle) {
		if pause.For(ctx, DefaultCrashSettle/10) != nil {
			break
		}
		p = s.deadProc(ctx)
	}
	if p == nil {
		p = s.dep.serve
	}
	return s.crashedProc(ctx, p, phase, what, err)
}

// crashedProc builds the failure of one instance that died or logged a
// fatal line, as crashed does for a single server: it lets the process
// finish dying first, then explains the crash from its own log with its
// own engine's profile, naming the instance and its host.
func (s *scenarioRun) crashedProc(ctx context.Context, p *roleProc, phase StepName, what string, err error) *ScenarioError {
	o := s.o
	settle := o.now().Add(DefaultCrashSettle)
	for o.now().Before(settle) {
		if alive, aerr := remote.Alive(ctx, p.node.h, p.pidFile); aerr == nil && !alive {
			break
		}
		if pause.For(ctx, DefaultCrashSettle/10) != nil {
			break
		}
	}
	log := s.procLog(context.WithoutCancel(ctx), p, DefaultFailureScanLines)
	f := p.profile.Failure(log)
	reason := what
	if f.Line != "" {
		reason += ": " + f.Line
	}
	if f.Excerpt != "" {
		reason += "\n" + f.Excerpt
	}
	se := s.failProc(p, phase, reason, lastLines(log, DefaultLogTailLines))
	se.Err = err
	return se
}

// failProc is a failure of one instance: the reason names it and the
// failure is its host's.
func (s *scenarioRun) failProc(p *roleProc, phase StepName, reason, tail string) *ScenarioError {
	return &ScenarioError{Scenario: s.sc.Name, Host: p.node.h.Name(), Phase: phase,
		Reason: fmt.Sprintf("role %s on %s: %s", p.name, p.node.h.Name(), reason), LogTail: tail}
}

// procLog is the last n lines of an instance's log, or what went wrong
// reading them.
func (s *scenarioRun) procLog(ctx context.Context, p *roleProc, n int) string {
	tail, err := remote.LastLines(ctx, p.node.h, p.log, n)
	if err != nil {
		return fmt.Sprintf("(reading %s on %s: %v)", path.Base(p.log), p.node.h.Name(), err)
	}
	return tail
}

// stopDeployment stops the sweep, then every instance in the reverse of
// the order they started in (the router before its workers, so it sends
// them nothing more), whether or not this attempt started it: Ctrl-C during
// a start may have left one that the pid file alone knows.
func stopDeployment(ctx context.Context, s *scenarioRun) error {
	var errs []string
	if !s.w.unreachable {
		if err := s.stopOverLink(ctx, s.w.paths.sweepPID); err != nil {
			return fmt.Errorf("stopping the sweep of %s on %s: %w", s.sc.Name, s.w.h.Name(), err)
		}
	}
	for i := len(s.dep.waves) - 1; i >= 0; i-- {
		for _, p := range s.dep.waves[i] {
			if p.node.unreachable {
				errs = append(errs, fmt.Sprintf("role %s: %s is unreachable; its process may still run there (pid file %s)", p.name, p.node.h.Name(), p.pidFile))
				continue
			}
			if err := s.stopOn(ctx, p.node, p.pidFile); err != nil {
				errs = append(errs, fmt.Sprintf("stopping role %s of %s on %s: %v", p.name, s.sc.Name, p.node.h.Name(), err))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// stopOldRoles stops, on every host of the worker's group, whatever an
// instance's pid file there names: a killed orchestrator's deployment of
// any shape leaves one per process it had started.
func (s *scenarioRun) stopOldRoles(ctx context.Context) error {
	for _, n := range s.w.nodes() {
		if n.unreachable {
			continue
		}
		var files []string
		list := fmt.Sprintf("for f in %s/%s*.pid; do [ -e \"$f\" ] && printf '%%s\\n' \"$f\"; done; true",
			campaign.ShellQuote(n.paths.workdir), rolePIDPrefix+n.paths.slotTag)
		err := n.overLink(ctx, s.sc.Name, "listing the role pid files", func(ctx context.Context) error {
			out, _, err := n.h.Run(ctx, list)
			files = strings.Fields(string(out))
			return err
		})
		if err != nil {
			return fmt.Errorf("listing the pid files in %s on %s: %w", n.paths.workdir, n.h.Name(), err)
		}
		if n != s.w {
			files = append(files, n.paths.serverPID)
		}
		for _, f := range files {
			if err := s.stopOn(ctx, n, f); err != nil {
				return fmt.Errorf("stopping the process of %s on %s: %w", f, n.h.Name(), err)
			}
		}
	}
	return nil
}

// saveDeploymentLogs downloads every instance's whole log into
// roles/NAME/server.log of the launch's results.
func saveDeploymentLogs(ctx context.Context, s *scenarioRun) error {
	var errs []string
	for _, p := range s.dep.procs {
		// A role never started (a later wave of a launch that failed
		// before it) has only the empty log the launch created: keeping it
		// would say it ran.
		if p.launch == nil || !p.started || p.node.unreachable {
			continue
		}
		local := filepath.Join(s.dir, rolesDir, p.name, results.ServerLog)
		// The role's folder is made by its first /metrics scrape in the
		// sweep; a launch that failed before it still keeps its logs.
		if err := os.MkdirAll(filepath.Dir(local), results.DirMode); err != nil {
			errs = append(errs, fmt.Sprintf("keeping the log of role %s: %v", p.name, err))
			continue
		}
		err := p.node.overLink(ctx, s.sc.Name, "downloading the log of role "+p.name, func(ctx context.Context) error {
			return p.node.h.Download(ctx, p.log, local)
		})
		if err != nil {
			errs = append(errs, fmt.Sprintf("downloading the log %s of role %s from %s: %v", p.log, p.name, p.node.h.Name(), err))
			continue
		}
		setResultMode(local)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// collectRoles keeps every instance's last /metrics scrape beside its log
// (roles/NAME/metrics/final.prom); an instance that serves none is left
// out.
func collectRoles(ctx context.Context, s *scenarioRun) error {
	for _, p := range s.dep.procs {
		if p.health == "" {
			continue
		}
		status, body, err := get(ctx, p.client, p.url+"/metrics", DefaultProbeTimeout)
		if err != nil || status != http.StatusOK {
			continue
		}
		if err := results.WriteFileAtomic(filepath.Join(s.dir, rolesDir, p.name, results.MetricsDir, FinalMetricsFile), body); err != nil {
			return err
		}
	}
	return nil
}

// preflightServers are the servers the preflight asks the engine about,
// of the scenarios this invocation may launch (only, when given): each
// scenario of one server, and each role of a deployment, as the role runs
// it (SCENARIO.ROLE: its flags over the scenario's, so that a worker's
// --disaggregation-mode is checked too). A role with a launch of its own
// is not asked, as a scenario's is not; a router's program is run with
// --help all the same (routerHelps).
func preflightServers(scs []*campaign.Scenario, only []string) []*campaign.Scenario {
	var out []*campaign.Scenario
	for _, sc := range scs {
		if len(only) > 0 && !slices.Contains(only, sc.Name) {
			continue
		}
		if sc.Deployment == nil {
			out = append(out, sc)
			continue
		}
		for _, r := range sc.Deployment.Roles {
			out = append(out, sc.RoleScenario(r))
		}
	}
	return out
}

// routerHelp is the help call of a deployment's router: the role's own
// program followed by --help.
type routerHelp struct {
	sc      *campaign.Scenario
	role    string
	command string
}

// routerHelps are the help calls of the routers of the deployments this
// invocation may launch (only, when given), once per distinct command: each
// role whose own launch runs a router (isRouter), its program (the words of
// its rendered launch before the first --flag, engine.role_commands
// applied) followed by --help, in the role's environment. A router starts
// last, once its workers have loaded (readyDeployment): one that is not
// installed would otherwise fail every round only after the workers' load.
// Other roles with a launch of their own are not run: their program may
// not take --help, or start its server on it.
func (w *worker) routerHelps(on campaign.On) ([]routerHelp, error) {
	o := w.o
	var out []routerHelp
	for _, sc := range o.c.Scenarios {
		if sc.Deployment == nil || len(o.opt.Only) > 0 && !slices.Contains(o.opt.Only, sc.Name) {
			continue
		}
		insts := sc.Deployment.Instances(o.c.Engine.Port, w.slot)
		for i, in := range insts {
			if in.Index != 0 || !isRouter(in.Role.Launch) {
				continue
			}
			l, err := campaign.RenderInstance(o.c, sc, insts, i, w.slot, on, campaign.LocalAddresses)
			if err != nil {
				return nil, err
			}
			prog := l.Argv[:programEnd(l.Argv)]
			if len(prog) == 0 {
				continue
			}
			var b strings.Builder
			b.WriteString("env --")
			for _, k := range slices.Sorted(maps.Keys(l.Env)) {
				b.WriteString(" " + k + "=" + campaign.ShellQuote(l.Env[k]))
			}
			b.WriteString(" " + campaign.ShellJoin(append(slices.Clone(prog), "--help")))
			cmd := b.String()
			if !slices.ContainsFunc(out, func(h routerHelp) bool { return h.command == cmd }) {
				out = append(out, routerHelp{sc: sc, role: in.Role.Name, command: cmd})
			}
		}
	}
	return out, nil
}

// programEnd is where a launch's program ends: at its first --flag, as
// engine.role_commands takes it (`python3 -m sglang_router.launch_router`,
// `{bakeoff} sim router`).
func programEnd(argv []string) int {
	if i := slices.IndexFunc(argv, func(w string) bool { return strings.HasPrefix(w, "--") }); i >= 0 {
		return i
	}
	return len(argv)
}

// isRouter reports whether a role's own launch, as written, runs a router:
// SGLang's (the module sglang_router.launch_router, sgl-project/sglang
// sgl-model-gateway/bindings/python/src/sglang_router/), or bakeoff's
// simulated one (`{bakeoff} sim router`). Both answer --help with status 0
// (argparse's help; sim/router's usage).
func isRouter(launch []string) bool {
	prog := launch[:programEnd(launch)]
	for i, w := range prog {
		if strings.HasPrefix(w, "sglang_router") || w == "sim" && i+1 < len(prog) && prog[i+1] == "router" {
			return true
		}
	}
	return false
}

// routerError is a router whose program does not run on a host: the
// preflight's problem, before anything is launched.
type routerError struct {
	sc   *campaign.Scenario
	role string
	err  error
}

func (e *routerError) Error() string {
	msg := fmt.Sprintf("scenario %s, role %s: its router does not run: %v", e.sc.Name, e.role, e.err)
	if e.sc.File != "" {
		msg = e.sc.File + ": " + msg
	}
	return msg
}

func (e *routerError) Unwrap() error { return e.err }

// preflightRouters runs each router's help call on the host (bounded as
// the engines' are, preflight.HelpTimeout) and returns a *routerError for
// each that does not exit 0: not installed (python's "No module named
// 'sglang_router'"), a wrong python, a program not found. A dry host records
// the calls and answers nothing to check.
func (w *worker) preflightRouters(ctx context.Context, on campaign.On, dry bool) []error {
	helps, err := w.routerHelps(on)
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, h := range helps {
		err := preflight.Runs(ctx, w.h, preflight.Call{Command: h.command, Dir: w.paths.workdir})
		if err == nil || dry || ctx.Err() != nil {
			continue
		}
		errs = append(errs, &routerError{sc: h.sc, role: h.role, err: err})
	}
	return errs
}

// pidFiles names where a kept deployment's processes can be found: each
// instance's pid file on its host.
func (d *deployRun) pidFiles() string {
	var out []string
	for _, p := range d.procs {
		out = append(out, p.node.h.Name()+":"+p.pidFile)
	}
	return strings.Join(out, ", ")
}
