// Package headless drives a headless Chromium over the DevTools protocol, so
// that tests can load a page in a real browser and read back what it
// rendered: element sizes, the text shown, console errors.
//
// It speaks the protocol over the pipe Chromium opens with
// --remote-debugging-pipe (it reads commands from file descriptor 3 and
// writes replies and events to descriptor 4, each message a JSON object
// ended by a NUL byte), so it needs no port, no WebSocket and no library.
// Protocol reference: https://chromedevtools.github.io/devtools-protocol/.
package headless

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// EnvBrowser names an environment variable that, when set, is the path of
// the browser to run instead of the first one Find finds on the PATH.
const EnvBrowser = "BAKEOFF_CHROMIUM"

// browserNames are the executables Find looks for, in order: Debian's
// package installs "chromium".
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"}

// ErrNotFound is returned by Find when no browser is installed.
var ErrNotFound = errors.New("no chromium on the PATH (apt-get install chromium, or set " + EnvBrowser + ")")

// Find returns the path of a Chromium-based browser: $BAKEOFF_CHROMIUM, else
// the first of chromium, chromium-browser, google-chrome on the PATH.
func Find() (string, error) {
	if p := os.Getenv(EnvBrowser); p != "" {
		return exec.LookPath(p)
	}
	for _, n := range browserNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", ErrNotFound
}

// message is one command sent to the browser.
type message struct {
	ID        int    `json:"id"`
	SessionID string `json:"sessionId,omitempty"`
	Method    string `json:"method"`
	Params    any    `json:"params,omitempty"`
}

// incoming is one message from the browser: a reply (ID set) or an event.
type incoming struct {
	ID        int             `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// event is a received event, its params left raw.
type event struct {
	SessionID string
	Method    string
	Params    json.RawMessage
}

// Browser is a running headless Chromium.
type Browser struct {
	cmd     *exec.Cmd
	profile string
	toB     io.WriteCloser
	stderr  bytes.Buffer

	wmu sync.Mutex // serializes writes to the pipe

	mu      sync.Mutex
	nextID  int
	pending map[int]chan incoming
	events  []event
	notify  chan struct{} // gets a value after each event, never blocks the reader
	readErr error
	done    chan struct{}
}

// Option changes how Start runs the browser.
type Option func(*exec.Cmd)

// WithEnv adds environment variables ("NAME=value") to those the browser
// inherits: FontConfig's, to lay pages out with a chosen set of fonts.
func WithEnv(kv ...string) Option {
	return func(c *exec.Cmd) {
		if c.Env == nil {
			c.Env = os.Environ()
		}
		c.Env = append(c.Env, kv...)
	}
}

// Start runs the browser at path headless, with a throwaway profile. Close
// stops it. ctx bounds only the start.
func Start(ctx context.Context, path string, opts ...Option) (*Browser, error) {
	profile, err := os.MkdirTemp("", "bakeoff-chromium-")
	if err != nil {
		return nil, fmt.Errorf("starting chromium: %w", err)
	}
	// Our ends and the browser's: it reads inR (fd 3), writes outW (fd 4).
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting chromium: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("starting chromium: %w", err)
	}
	cmd := exec.Command(path,
		"--headless",
		"--remote-debugging-pipe",
		"--user-data-dir="+profile,
		// As root (CI containers) Chromium will not start sandboxed.
		"--no-sandbox",
		"--disable-gpu",
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-extensions",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--hide-scrollbars",
		"--mute-audio",
		"about:blank",
	)
	cmd.ExtraFiles = []*os.File{inR, outW}
	for _, o := range opts {
		o(cmd)
	}
	b := &Browser{
		cmd: cmd, profile: profile, toB: inW,
		pending: map[int]chan incoming{}, notify: make(chan struct{}, 1), done: make(chan struct{}),
	}
	cmd.Stderr = &lockedWriter{mu: &b.mu, w: &b.stderr}
	if err := cmd.Start(); err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		os.RemoveAll(profile)
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	inR.Close()
	outW.Close()
	go b.read(outR)
	// The browser answers once it is up; a first command tells.
	if _, err := b.call(ctx, "", "Browser.getVersion", nil); err != nil {
		b.Close()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	return b, nil
}

// lockedWriter lets the browser's stderr be read while it is written.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// read dispatches every message from the browser until the pipe closes.
func (b *Browser) read(r io.ReadCloser) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	var err error
	for {
		var raw []byte
		raw, err = br.ReadBytes(0)
		if err != nil {
			break
		}
		var m incoming
		if err = json.Unmarshal(raw[:len(raw)-1], &m); err != nil {
			err = fmt.Errorf("reading from chromium: %w", err)
			break
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.pending[m.ID]; ok {
				delete(b.pending, m.ID)
				ch <- m
			}
		} else if m.Method != "" {
			b.events = append(b.events, event{SessionID: m.SessionID, Method: m.Method, Params: m.Params})
			select {
			case b.notify <- struct{}{}:
			default:
			}
		}
		b.mu.Unlock()
	}
	b.mu.Lock()
	if errors.Is(err, io.EOF) {
		err = errors.New("chromium closed the DevTools pipe")
	}
	b.readErr = err
	for id, ch := range b.pending {
		close(ch)
		delete(b.pending, id)
	}
	b.mu.Unlock()
	close(b.done)
}

// call sends one command (to the browser when session is empty, else to
// that page's session) and returns its result.
func (b *Browser) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	ch := make(chan incoming, 1)
	b.mu.Lock()
	if b.readErr != nil {
		err := b.readErr
		b.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	b.nextID++
	id := b.nextID
	b.pending[id] = ch
	b.mu.Unlock()
	data, err := json.Marshal(message{ID: id, SessionID: session, Method: method, Params: params})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	b.wmu.Lock()
	_, err = b.toB.Write(append(data, 0))
	b.wmu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%s: writing to chromium: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			b.mu.Lock()
			err := b.readErr
			b.mu.Unlock()
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		return m.Result, nil
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Stderr is what the browser has written to its standard error so far:
// the place to look when it misbehaves.
func (b *Browser) Stderr() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stderr.String()
}

// Close stops the browser and removes its profile.
func (b *Browser) Close() error {
	b.wmu.Lock()
	if data, err := json.Marshal(message{ID: 1 << 30, Method: "Browser.close"}); err == nil {
		b.toB.Write(append(data, 0))
	}
	b.toB.Close()
	b.wmu.Unlock()
	<-b.done
	err := b.cmd.Wait()
	os.RemoveAll(b.profile)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return nil // killed or closed: how it ends
	}
	return err
}

// Page is one tab, attached to its own protocol session.
type Page struct {
	b       *Browser
	session string
	seen    int // events before this index have been looked at
	errs    []string
}

// NewPage opens a blank tab and enables the domains that report errors.
func (b *Browser) NewPage(ctx context.Context) (*Page, error) {
	res, err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil {
		return nil, err
	}
	var t struct {
		TargetID string `json:"targetId"`
	}
	if err := json.Unmarshal(res, &t); err != nil {
		return nil, fmt.Errorf("Target.createTarget: %w", err)
	}
	res, err = b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": t.TargetID, "flatten": true})
	if err != nil {
		return nil, err
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &s); err != nil {
		return nil, fmt.Errorf("Target.attachToTarget: %w", err)
	}
	p := &Page{b: b, session: s.SessionID}
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		if _, err := b.call(ctx, p.session, m, nil); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Call sends any protocol command to the page's session.
func (p *Page) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return p.b.call(ctx, p.session, method, params)
}

// SetViewport sets the page's width and height in CSS pixels; mobile makes
// it lay out as a phone would (the viewport meta tag applies).
func (p *Page) SetViewport(ctx context.Context, width, height int, mobile bool) error {
	_, err := p.Call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile,
	})
	return err
}

// Navigate loads url and waits for its load event.
func (p *Page) Navigate(ctx context.Context, url string) error {
	p.scan() // errors of an earlier page stay counted
	res, err := p.Call(ctx, "Page.navigate", map[string]any{"url": url})
	if err != nil {
		return err
	}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := json.Unmarshal(res, &nav); err == nil && nav.ErrorText != "" {
		return fmt.Errorf("loading %s: %s", url, nav.ErrorText)
	}
	for {
		if p.scan() {
			return nil
		}
		select {
		case <-p.b.notify:
		case <-p.b.done:
			return fmt.Errorf("loading %s: %w", url, p.b.readErr)
		case <-ctx.Done():
			return fmt.Errorf("loading %s: %w", url, ctx.Err())
		}
	}
}

// scan looks at the events that arrived since the last scan, keeps the
// errors among them, and reports whether the page's load event was one.
func (p *Page) scan() (loaded bool) {
	p.b.mu.Lock()
	evs := p.b.events[p.seen:]
	p.seen = len(p.b.events)
	p.b.mu.Unlock()
	for _, e := range evs {
		if e.SessionID != p.session {
			continue
		}
		switch e.Method {
		case "Page.loadEventFired":
			loaded = true
		case "Runtime.exceptionThrown":
			var x struct {
				Details struct {
					Text      string `json:"text"`
					Exception struct {
						Description string `json:"description"`
					} `json:"exception"`
				} `json:"exceptionDetails"`
			}
			json.Unmarshal(e.Params, &x)
			p.errs = append(p.errs, strings.TrimSpace("exception: "+x.Details.Text+" "+x.Details.Exception.Description))
		case "Runtime.consoleAPICalled":
			var x struct {
				Type string `json:"type"`
				Args []struct {
					Value       any    `json:"value"`
					Description string `json:"description"`
				} `json:"args"`
			}
			json.Unmarshal(e.Params, &x)
			if x.Type == "error" || x.Type == "assert" {
				var parts []string
				for _, a := range x.Args {
					if a.Value != nil {
						parts = append(parts, fmt.Sprint(a.Value))
					} else {
						parts = append(parts, a.Description)
					}
				}
				p.errs = append(p.errs, "console."+x.Type+": "+strings.Join(parts, " "))
			}
		case "Log.entryAdded":
			var x struct {
				Entry struct {
					Level  string `json:"level"`
					Source string `json:"source"`
					Text   string `json:"text"`
					URL    string `json:"url"`
				} `json:"entry"`
			}
			json.Unmarshal(e.Params, &x)
			if x.Entry.Level == "error" {
				p.errs = append(p.errs, fmt.Sprintf("%s error: %s %s", x.Entry.Source, x.Entry.Text, x.Entry.URL))
			}
		}
	}
	return loaded
}

// Errors are the console errors, uncaught exceptions and browser-logged
// errors (a resource that failed to load, a blocked request) of the page
// so far.
func (p *Page) Errors() []string {
	p.scan()
	return append([]string(nil), p.errs...)
}

// Eval evaluates a JavaScript expression in the page and decodes its value,
// which must be JSON-serializable, into out.
func (p *Page) Eval(ctx context.Context, expr string, out any) error {
	res, err := p.Call(ctx, "Runtime.evaluate", map[string]any{
		"expression": expr, "returnByValue": true, "awaitPromise": true,
	})
	if err != nil {
		return err
	}
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return fmt.Errorf("Runtime.evaluate: %w", err)
	}
	if r.Exception != nil {
		return fmt.Errorf("evaluating in the page: %s %s", r.Exception.Text, r.Exception.Exception.Description)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(r.Result.Value, out); err != nil {
		return fmt.Errorf("decoding the page's answer: %w", err)
	}
	return nil
}

// Screenshot captures the whole page (beyond the viewport) as PNG.
func (p *Page) Screenshot(ctx context.Context) ([]byte, error) {
	res, err := p.Call(ctx, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true})
	if err != nil {
		return nil, err
	}
	var r struct {
		Data []byte `json:"data"` // base64 in JSON: encoding/json decodes it
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("Page.captureScreenshot: %w", err)
	}
	return r.Data, nil
}
