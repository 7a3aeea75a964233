package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/headless"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// shownField is one number as the browser shows it.
type shownField struct {
	Field    string `json:"field"`
	Scenario string `json:"scenario"`
	Level    int    `json:"level"`
	Round    int    `json:"round"`
	Value    string `json:"value"`
	Text     string `json:"text"`
}

type box struct {
	ID   string  `json:"id"`
	W    float64 `json:"w"`
	H    float64 `json:"h"`
	Kids int     `json:"kids"`
}

// probe is what the page reports of itself once laid out.
type probe struct {
	Fields   []shownField `json:"fields"`
	Outcomes []struct {
		Scenario string `json:"scenario"`
		Level    int    `json:"level"`
		Outcome  string `json:"outcome"`
		Winner   bool   `json:"winner"`
		Text     string `json:"text"`
	} `json:"outcomes"`
	Tables      []box   `json:"tables"`
	Plots       []box   `json:"plots"`
	DocWidth    float64 `json:"docWidth"`
	ViewWidth   float64 `json:"viewWidth"`
	VerdictText string  `json:"verdictText"`
	// VerdictScroll is the verdict table's box: the width of its content
	// (scrollWidth) and the width it shows (clientWidth); wider content
	// means a horizontal scroll bar.
	VerdictScroll struct {
		ScrollWidth float64 `json:"scrollWidth"`
		ClientWidth float64 `json:"clientWidth"`
	} `json:"verdictScroll"`
	Saturated int    `json:"saturated"`
	Capacity  string `json:"capacity"`
	// ScrollingWidth is document.scrollingElement's scrollWidth: wider
	// than ViewWidth, the page scrolls sideways.
	ScrollingWidth float64 `json:"scrollingWidth"`
	// VerdictTableScroll is the verdict table element's own.
	VerdictTableScroll struct {
		ScrollWidth float64 `json:"scrollWidth"`
		ClientWidth float64 `json:"clientWidth"`
	} `json:"verdictTableScroll"`
	// Legends are the plots' legend texts as laid out, each with the room
	// its plot gave it (data-box), in CSS px.
	Legends []legendText `json:"legends"`
	// Marks are the colour (stroke, else fill) and dashes of every drawn
	// element that names its scenario: the plots' lines, markers, bands and
	// swatches, and the verdict table's swatches.
	Marks []mark `json:"marks"`
	// MinFont is the smallest plot text as drawn, in CSS px: its font size
	// times its plot's scale; MinFontText is that text. MinBox is the
	// smaller side of the smallest text's getBoundingClientRect.
	MinFont     float64 `json:"minFont"`
	MinFontText string  `json:"minFontText"`
	MinBox      float64 `json:"minBox"`
}

// legendText is one legend's text: its getBoundingClientRect (L, R, T, B)
// and the room its plot gave it (BL, BR, BT, BB), in CSS px.
type legendText struct {
	Plot                       string `json:"plot"`
	Text                       string `json:"text"`
	L, R, T, B, BL, BR, BT, BB float64
}

type mark struct {
	Where    string `json:"where"`
	Scenario string `json:"scenario"`
	Class    string `json:"class"`
	Color    string `json:"color"`
	Dash     string `json:"dash"`
}

const probeJS = `(() => {
  const r = (el) => el.getBoundingClientRect();
  const out = {fields: [], outcomes: [], tables: [], plots: []};
  for (const el of document.querySelectorAll('[data-field]')) {
    out.fields.push({field: el.dataset.field, scenario: el.dataset.scenario || '',
      level: +(el.dataset.level || 0), round: +(el.dataset.round || 0),
      value: el.dataset.value, text: el.textContent});
  }
  for (const td of document.querySelectorAll('#verdict-table td[data-outcome]')) {
    const tr = td.closest('tr');
    out.outcomes.push({scenario: td.dataset.scenario || '', level: +tr.dataset.level,
      outcome: td.dataset.outcome, winner: td.classList.contains('winner'), text: td.textContent});
  }
  for (const t of document.querySelectorAll('table')) {
    const b = r(t);
    out.tables.push({id: t.parentElement.id, w: b.width, h: b.height, kids: t.rows.length});
  }
  for (const f of document.querySelectorAll('figure[data-plot]')) {
    const s = f.querySelector('svg');
    const b = s ? r(s) : {width: 0, height: 0};
    out.plots.push({id: f.dataset.plot, w: b.width, h: b.height,
      kids: s ? s.querySelectorAll('path, text').length : 0});
  }
  out.saturated = document.querySelectorAll('td.saturated').length;
  const cap = document.querySelector('#capacity');
  out.capacity = cap ? cap.innerText : '';
  out.docWidth = document.documentElement.scrollWidth;
  out.viewWidth = window.innerWidth;
  const v = document.querySelector('#verdict-table');
  out.verdictText = v ? v.innerText : '';
  out.verdictScroll = v ? {scrollWidth: v.scrollWidth, clientWidth: v.clientWidth} : {scrollWidth: 0, clientWidth: 0};
  const vt = v ? v.querySelector('table') : null;
  out.verdictTableScroll = vt ? {scrollWidth: vt.scrollWidth, clientWidth: vt.clientWidth} : {scrollWidth: 0, clientWidth: 0};
  out.scrollingWidth = document.scrollingElement.scrollWidth;
  out.legends = []; out.marks = []; out.minFont = 1e9; out.minFontText = ''; out.minBox = 1e9;
  for (const f of document.querySelectorAll('figure[data-plot]')) {
    const svg = f.querySelector('svg.plot');
    if (!svg) continue;
    // The viewBox's units to the page's px.
    const m = svg.getScreenCTM();
    const scale = Math.hypot(m.a, m.b);
    for (const t of svg.querySelectorAll('text')) {
      const b = r(t);
      if (b.width === 0 && b.height === 0) continue;
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (px < out.minFont) { out.minFont = px; out.minFontText = f.dataset.plot + ': ' + t.textContent; }
      // A text's height is its box's side across the line: the width
      // where it is turned a quarter (the y axis's label).
      const tm = t.getScreenCTM();
      out.minBox = Math.min(out.minBox, Math.abs(tm.b) > Math.abs(tm.a) ? b.width : b.height);
    }
    for (const t of svg.querySelectorAll('text.legend')) {
      const [x0, y0, x1, y1] = t.dataset.box.split(' ').map(Number);
      const p0 = new DOMPoint(x0, y0).matrixTransform(m), p1 = new DOMPoint(x1, y1).matrixTransform(m);
      const b = r(t);
      out.legends.push({plot: f.dataset.plot, text: t.textContent, L: b.left, R: b.right, T: b.top, B: b.bottom,
        BL: Math.min(p0.x, p1.x), BR: Math.max(p0.x, p1.x), BT: Math.min(p0.y, p1.y), BB: Math.max(p0.y, p1.y)});
    }
    for (const el of svg.querySelectorAll('path[data-scenario]')) {
      const cs = getComputedStyle(el);
      out.marks.push({where: f.dataset.plot, scenario: el.dataset.scenario, class: el.getAttribute('class') || '',
        color: cs.stroke !== 'none' ? cs.stroke : cs.fill, dash: cs.strokeDasharray});
    }
  }
  for (const th of document.querySelectorAll('#verdict-table th[data-scenario]')) {
    const l = th.querySelector('svg.swatch line');
    const cs = l ? getComputedStyle(l) : {stroke: 'no swatch', strokeDasharray: ''};
    out.marks.push({where: 'verdict-table', scenario: th.dataset.scenario, class: 'table-swatch', color: cs.stroke, dash: cs.strokeDasharray});
  }
  return out;
})()`

// TestHTMLInBrowser loads the report in a real headless Chromium at a
// desktop, a phone and a printed page's width, and checks what it shows:
// no console error, the tables and every plot laid out with a size, the
// page no wider than the screen (tables scroll inside their box), and every
// number shown equal to the one in verdict.json. The browser has one font
// and no Liberation font, as a phone or a stock desktop has, so that the
// plots are seen as such a reader sees them: each legend's text must lie
// in the room its plot gave it, each scenario must have one colour and one
// line style in every plot and the verdict table's swatch, and on a phone
// the verdict table must not scroll sideways and no plot text be under
// minPlotTextPx.
func TestHTMLInBrowser(t *testing.T) {
	path, err := headless.Find()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the browser test must run in CI: %v", err)
		}
		t.Skipf("skipping the browser test: %v", err)
	}
	fontFile, err := headless.FindFont("liberation", browserTestFonts...)
	if err != nil {
		t.Fatalf("a font for the browser test: %v", err)
	}
	fonts, err := headless.OnlyFonts(t.TempDir(), fontFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the browser's one font: %s", fontFile)
	v, _ := testVerdict(t)
	why, _ := verdictOf(t, whyRun(t, 41, 2.3))
	pages := []struct {
		name, page string
		// fits is set where the verdict table must fit a desktop's width
		// without a scroll bar: the demo's four scenarios, energy and all.
		fits bool
	}{
		{"rounds", writePage(t, v), false},
		{"rates-saturated", writePage(t, ratesSaturated(v)), false},
		{"energy", writePage(t, withEnergy(v)), false},
		{"slo", writePage(t, sloVerdict(t, 3)), false},
		{"demo", writePage(t, withEnergy(simulatedVerdict(t, demoSweep(), demoRounds, 3, demoScenarios()))), true},
		// Accept lengths from the requests, server timelines and a
		// break-even: the page's explanation of the turn.
		{"why", writePage(t, why), true},
		// Scenarios of 8, 4 and 8 GPUs, compared per GPU.
		{"per-gpu", writePage(t, perGPUReportVerdict(t)), false},
	}
	shots := os.Getenv(EnvScreenshots)

	// A bound on a stuck browser, not a timed assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := headless.Start(ctx, path, headless.WithEnv(fonts))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	}()
	p, err := b.NewPage(ctx)
	if err != nil {
		t.Fatalf("%v\nchromium's stderr:\n%s", err, b.Stderr())
	}
	for _, pg := range pages {
		want := readVerdictJSON(t, filepath.Join(filepath.Dir(pg.page), JSONFile))
		page := pg.page
		for _, vp := range []struct {
			name          string
			width, height int
			mobile, print bool
		}{
			{"desktop", 1280, 900, false, false},
			{"phone", 390, 844, true, false},
			{"print", 700, 1000, false, true},
		} {
			t.Run(pg.name+"/"+vp.name, func(t *testing.T) {
				if err := p.SetViewport(ctx, vp.width, vp.height, vp.mobile); err != nil {
					t.Fatal(err)
				}
				media := ""
				if vp.print {
					media = "print"
				}
				if _, err := p.Call(ctx, "Emulation.setEmulatedMedia", map[string]any{"media": media}); err != nil {
					t.Fatal(err)
				}
				if err := p.Navigate(ctx, "file://"+page); err != nil {
					t.Fatal(err)
				}
				var got probe
				if err := p.Eval(ctx, probeJS, &got); err != nil {
					t.Fatal(err)
				}
				for _, e := range p.Errors() {
					t.Errorf("browser error: %s", e)
				}
				checkLayout(t, &got, pagePlots(t, want))
				checkNumbers(t, want, &got)
				checkWhy(t, want, &got)
				checkPlots(t, want, &got)
				if vp.name == "phone" {
					checkPhone(t, want, &got, vp.width)
				}
				if pg.fits && vp.name == "desktop" {
					t.Logf("verdict table: content %.0f px in a %.0f px box", got.VerdictScroll.ScrollWidth, got.VerdictScroll.ClientWidth)
					if sw, cw := got.VerdictScroll.ScrollWidth, got.VerdictScroll.ClientWidth; sw > cw || sw > float64(vp.width) {
						t.Errorf("the verdict table is %.0f px wide in a %.0f px box on a %d px screen: it scrolls sideways", sw, cw, vp.width)
					}
				}
				if shots != "" {
					png, err := p.Screenshot(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(shots, pg.name+"-"+vp.name+".png"), png, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	}
}

// browserTestFonts are the fonts TestHTMLInBrowser prefers as the browser's
// one font, in order: DejaVu Sans, the fallback of most Linux desktops,
// which lays Liberation Sans's text out some 10% wider.
var browserTestFonts = []string{"dejavusans.ttf", "sans"}

// minPlotTextPx is the smallest plot text, in CSS px, a phone must show.
const minPlotTextPx = 9

// checkPlots checks each legend's text against the room its plot gave it
// (it would run past it, over the next entry's swatch, in a font wider
// than the one it was measured in), and that each scenario is drawn in one
// colour everywhere, no two scenarios in one colour, and each scenario's
// lines in one line style, the verdict table's swatch included.
func checkPlots(t *testing.T, v *verdict.Verdict, got *probe) {
	t.Helper()
	const tol = 0.5 // px: rounding of the layout
	if len(got.Legends) == 0 {
		t.Error("no legend text on the page")
	}
	for _, l := range got.Legends {
		if l.L < l.BL-tol || l.R > l.BR+tol || l.T < l.BT-tol || l.B > l.BB+tol {
			t.Errorf("plot %s: legend %q is drawn at x %.1f–%.1f, y %.1f–%.1f px, outside its room x %.1f–%.1f, y %.1f–%.1f",
				l.Plot, l.Text, l.L, l.R, l.T, l.B, l.BL, l.BR, l.BT, l.BB)
		}
	}
	colors := map[string]map[string][]string{} // scenario, colour: where
	dashes := map[string]map[string][]string{} // scenario, dashes: where
	add := func(m map[string]map[string][]string, k1, k2, where string) {
		if m[k1] == nil {
			m[k1] = map[string][]string{}
		}
		m[k1][k2] = append(m[k1][k2], where)
	}
	for _, m := range got.Marks {
		add(colors, m.Scenario, m.Color, m.Where+" "+m.Class)
		if m.Class == "line" && m.Dash != "" || m.Class == "table-swatch" {
			if m.Class == "line" && strings.Contains(m.Color, "none") {
				continue
			}
			add(dashes, m.Scenario, m.Dash, m.Where+" "+m.Class)
		}
	}
	for _, s := range v.Scenarios {
		if s.Failed() {
			continue
		}
		if len(colors[s.Name]) == 0 {
			t.Errorf("scenario %s is drawn nowhere", s.Name)
		}
	}
	// One colour, give or take the rounding of a translucent band's.
	one := map[string][3]int{}
	for s, cs := range colors {
		for c, where := range cs {
			rgb, err := parseRGB(c)
			if err != nil {
				t.Errorf("scenario %s in %v: %v", s, where, err)
				continue
			}
			if first, ok := one[s]; !ok {
				one[s] = rgb
			} else if !nearRGB(first, rgb) {
				t.Errorf("scenario %s is drawn in %v and in %s (%v): %v", s, first, c, where, cs)
			}
		}
	}
	if len(v.Scenarios) <= len(scenarioPalette) {
		for s1, c1 := range one {
			for s2, c2 := range one {
				if s1 < s2 && nearRGB(c1, c2) {
					t.Errorf("scenarios %s and %s are both drawn in %v", s1, s2, c1)
				}
			}
		}
	}
	for s, ds := range dashes {
		if len(ds) != 1 {
			t.Errorf("scenario %s's lines have %d line styles: %v", s, len(ds), ds)
		}
	}
}

// parseRGB reads a computed colour, "rgb(0, 114, 178)".
func parseRGB(s string) ([3]int, error) {
	var c [3]int
	if _, err := fmt.Sscanf(s, "rgb(%d, %d, %d)", &c[0], &c[1], &c[2]); err != nil {
		return c, fmt.Errorf("colour %q: %w", s, err)
	}
	return c, nil
}

// nearRGB reports whether two colours are one, each channel within the
// rounding of an alpha-blended colour's.
func nearRGB(a, b [3]int) bool {
	for i := range a {
		if d := a[i] - b[i]; d < -2 || d > 2 {
			return false
		}
	}
	return true
}

// checkPhone checks the page on a phone screen width px wide: nothing
// scrolls sideways, the page nor the verdict table (one card per level),
// every scenario is named in it, and no plot text is smaller than
// minPlotTextPx. A phone widens its layout to a page's content, so the
// page is held to the screen's width, not to innerWidth.
func checkPhone(t *testing.T, v *verdict.Verdict, got *probe, width int) {
	t.Helper()
	if w := float64(width); got.ScrollingWidth > w || got.ViewWidth > w {
		t.Errorf("the page scrolls sideways: %.0f px of content, laid out %.0f px wide, on a %d px screen", got.ScrollingWidth, got.ViewWidth, width)
	}
	for what, sc := range map[string]struct{ ScrollWidth, ClientWidth float64 }{
		"verdict table's box": {got.VerdictScroll.ScrollWidth, got.VerdictScroll.ClientWidth},
		"verdict table":       {got.VerdictTableScroll.ScrollWidth, got.VerdictTableScroll.ClientWidth},
	} {
		if sc.ScrollWidth > sc.ClientWidth || sc.ClientWidth > float64(width) {
			t.Errorf("the %s scrolls sideways: %.0f px of content in %.0f px on a %d px screen", what, sc.ScrollWidth, sc.ClientWidth, width)
		}
	}
	for _, s := range v.Scenarios {
		if !s.Failed() && !strings.Contains(got.VerdictText, s.Name) {
			t.Errorf("the verdict table does not show %s's name on a phone", s.Name)
		}
	}
	t.Logf("smallest plot text: %.1f px (%q), its box %.1f px", got.MinFont, got.MinFontText, got.MinBox)
	if got.MinFont < minPlotTextPx || got.MinBox < minPlotTextPx {
		t.Errorf("plot text of %.1f px (%q), a box of %.1f px: under %d px on a phone", got.MinFont, got.MinFontText, got.MinBox, minPlotTextPx)
	}
}

// EnvScreenshots names a directory into which TestHTMLInBrowser writes a
// screenshot of each page at each width (PAGE-WIDTH.png), to look at.
const EnvScreenshots = "BAKEOFF_SCREENSHOTS"

// writePage writes every report of v into a fresh run directory and
// returns the path of its index.html.
func writePage(t *testing.T, v *verdict.Verdict) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteAll(dir, v); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, Dir, HTMLFile)
}

func readVerdictJSON(t *testing.T, path string) *verdict.Verdict {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// ratesSaturated is v as an open-loop run: each level C becomes C/2
// requests per second, and the first variant saturated at the highest rate,
// so the page shows rate labels and a saturated cell and detail row.
func ratesSaturated(v *verdict.Verdict) *verdict.Verdict {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var r verdict.Verdict
	if err := json.Unmarshal(data, &r); err != nil {
		panic(err)
	}
	key := func(c measure.Level) measure.Level { return measure.RateLevel(float64(c.Concurrency) / 2) }
	for i := range r.Levels {
		r.Levels[i] = key(r.Levels[i])
	}
	top := r.Levels[len(r.Levels)-1]
	variant := -1
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if variant < 0 && s.Name != r.Baseline && !s.Failed() {
			variant = i
		}
		for j := range s.Levels {
			s.Levels[j].Level = key(s.Levels[j].Level)
			if i == variant && s.Levels[j].Level == top {
				s.Levels[j].Saturated = true
				s.Levels[j].Saturation = "round 2: 40% of the arrivals never completed and latency grew by rank"
			}
		}
	}
	for i := range r.Rows {
		row := &r.Rows[i]
		row.Level = key(row.Level)
		if row.Level == top {
			row.Cells[variant] = verdict.Cell{Scenario: r.Scenarios[variant].Name, Saturated: true}
		}
	}
	return &r
}

func checkLayout(t *testing.T, got *probe, plots int) {
	t.Helper()
	if got.DocWidth > got.ViewWidth+1 {
		t.Errorf("the page is %.0f px wide on a %.0f px screen: something does not wrap or scroll in its box", got.DocWidth, got.ViewWidth)
	}
	var verdictTable bool
	for _, tb := range got.Tables {
		if tb.W <= 0 || tb.H <= 0 || tb.Kids < 2 {
			t.Errorf("table %q renders %.0f×%.0f px with %d rows", tb.ID, tb.W, tb.H, tb.Kids)
		}
		verdictTable = verdictTable || tb.ID == "verdict-table"
	}
	if !verdictTable {
		t.Error("no verdict table on the page")
	}
	if len(got.Plots) != plots {
		t.Errorf("%d plots on the page, want %d", len(got.Plots), plots)
	}
	for _, pl := range got.Plots {
		if pl.W <= 0 || pl.H <= 0 || pl.Kids == 0 {
			t.Errorf("plot %s renders %.0f×%.0f px with %d drawn elements", pl.ID, pl.W, pl.H, pl.Kids)
		}
	}
}

// checkNumbers compares every number on the page with verdict.json: its
// data-value exactly, its text as that value rounded to the digits shown.
// It also checks that every figure the JSON has is on the page.
func checkNumbers(t *testing.T, v *verdict.Verdict, got *probe) {
	t.Helper()
	count := map[string]int{}
	for _, f := range got.Fields {
		count[f.Field]++
		exp, scale, err := jsonFigure(v, f)
		if err != nil {
			t.Errorf("%s %s C=%d round %d: %v", f.Field, f.Scenario, f.Level, f.Round, err)
			continue
		}
		if dv, err := strconv.ParseFloat(f.Value, 64); err != nil || dv != exp {
			t.Errorf("%s %s C=%d round %d: data-value %q, verdict.json has %v", f.Field, f.Scenario, f.Level, f.Round, f.Value, exp)
		}
		if err := shownMatches(f.Text, exp*scale); err != nil {
			t.Errorf("%s %s C=%d round %d: %v", f.Field, f.Scenario, f.Level, f.Round, err)
		}
	}
	var present, compared, launches int
	for _, r := range v.Rows {
		for i, c := range r.Cells {
			if v.Scenarios[i].Failed() {
				continue
			}
			if c.Present {
				present++
			}
			if c.Compared {
				compared++
			}
		}
	}
	saturated := 0
	for _, r := range v.Rows {
		for _, c := range r.Cells {
			if c.Saturated {
				saturated++
			}
		}
	}
	energy := 0
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			if l.Energy != nil {
				energy++
			}
			if l.Saturated {
				saturated++ // its detail row says so instead of its figures
				continue
			}
			launches += len(l.Launches)
		}
	}
	if got.Saturated != saturated {
		t.Errorf("%d cells on the page say saturated, verdict.json has %d saturated cells and levels", got.Saturated, saturated)
	}
	if count["energy"] != energy || count["level-energy"] != energy {
		t.Errorf("%d and %d energy figures on the page, verdict.json has %d", count["energy"], count["level-energy"], energy)
	}
	for field, n := range map[string]int{"throughput": present, "delta": compared, "launch-throughput": launches} {
		if n == 0 || count[field] != n {
			t.Errorf("%d %q figures on the page, verdict.json has %d", count[field], field, n)
		}
	}
	outcomes := 0
	for _, o := range got.Outcomes {
		r := rowOf(v, o.Level)
		switch {
		case r == nil:
			t.Errorf("outcome at C=%d: no such level in verdict.json", o.Level)
		case o.Winner:
			if o.Outcome != r.Outcome || (r.Winner != "" && !strings.Contains(o.Text, r.Winner)) {
				t.Errorf("C=%d: the page says %s %q, verdict.json %s %q", o.Level, o.Outcome, o.Text, r.Outcome, r.Winner)
			}
		default:
			outcomes++
			c := v.Cell(levelOf(o.Level), o.Scenario)
			if c == nil || c.Outcome != o.Outcome || !strings.Contains(o.Text, c.Outcome) {
				t.Errorf("%s C=%d: the page says %q (%s), verdict.json %+v", o.Scenario, o.Level, o.Text, o.Outcome, c)
			}
		}
	}
	if outcomes != compared {
		t.Errorf("%d outcomes on the page, verdict.json has %d comparisons", outcomes, compared)
	}
	if v.Capacity != nil {
		if len(v.Capacity.Comparisons) == 0 {
			t.Error("verdict.json has no capacity comparison to look for")
		}
		for _, c := range v.Capacity.Comparisons {
			if !strings.Contains(got.Capacity, c.Sentence) {
				t.Errorf("the capacity sentence %q is not on the page; its capacity section reads %q", c.Sentence, got.Capacity)
			}
		}
	}
	if !strings.Contains(got.VerdictText, v.Baseline) {
		t.Errorf("the verdict table does not name the baseline %q", v.Baseline)
	}
}

// checkWhy checks that what explains the turn is on the page where
// verdict.json has it: a timeline panel per scenario and level with a
// timeline, the server's batch under each, and each crossing break-even's
// load and interval (their values checkNumbers compares).
func checkWhy(t *testing.T, v *verdict.Verdict, got *probe) {
	t.Helper()
	count := map[string]int{}
	for _, f := range got.Fields {
		count[f.Field]++
	}
	panels, server := map[string]bool{}, 0
	for _, p := range got.Plots {
		panels[p.ID] = true
	}
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			if l.Timeline == nil {
				continue
			}
			if name := TimelinePlotName(s.Name, l.Level); !panels[name] {
				t.Errorf("no timeline panel %s on the page", name)
			}
			if l.Server != nil && l.Server.Running != nil {
				server++
			}
		}
	}
	if count[fieldServerQueued] != server {
		t.Errorf("%d panels' queue figures on the page, verdict.json has %d levels with a server timeline", count[fieldServerQueued], server)
	}
	crossing := 0
	for _, x := range v.Crossovers {
		if x.BreakEven != nil && x.BreakEven.Kind == verdict.BreakEvenCrosses {
			crossing++
		}
	}
	if count["break-even"] != crossing || count["break-even-lo"] != crossing || count["break-even-hi"] != crossing {
		t.Errorf("%d break-even loads on the page, verdict.json has %d", count["break-even"], crossing)
	}
}

// levelOf is the level a data-level attribute names: the number the level
// is written as in JSON.
func levelOf(n int) measure.Level {
	var l measure.Level
	if err := json.Unmarshal([]byte(strconv.Itoa(n)), &l); err != nil {
		panic(err)
	}
	return l
}

func rowOf(v *verdict.Verdict, level int) *verdict.Row {
	for i := range v.Rows {
		if v.Rows[i].Level == levelOf(level) {
			return &v.Rows[i]
		}
	}
	return nil
}

// jsonFigure is the figure a page element names, read from the verdict,
// and the factor from its unit to the one shown.
func jsonFigure(v *verdict.Verdict, f shownField) (float64, float64, error) {
	if c := v.Cell(levelOf(f.Level), f.Scenario); c != nil {
		switch f.Field {
		case "throughput":
			return c.Throughput.Center, 1, nil
		case "throughput-hw":
			return c.Throughput.HalfWidthPct(), 1, nil
		case "delta":
			return c.DeltaPct, 1, nil
		case "delta-lo":
			return 100 * (c.OutcomeLo - 1), 1, nil
		case "delta-hi":
			return 100 * (c.OutcomeHi - 1), 1, nil
		case "p":
			return c.PAdjusted, 1, nil
		case "mde":
			return c.MDEPct, 1, nil
		case fieldThroughputPerGPU:
			if c.ThroughputPerGPU != nil {
				return c.ThroughputPerGPU.Center, 1, nil
			}
		}
	}
	if f.Field == fieldParetoTokS || f.Field == fieldParetoPerUser {
		pt := v.Pareto.Point(f.Scenario, levelOf(f.Level))
		switch {
		case pt == nil || !pt.Optimal:
			return 0, 0, errors.New("listed, but not Pareto-optimal in verdict.json")
		case f.Field == fieldParetoTokS:
			return pt.TokS, 1, nil
		}
		return pt.PerUser, 1, nil
	}
	if strings.HasPrefix(f.Field, "break-even") {
		for _, x := range v.Crossovers {
			if be := x.BreakEven; x.Scenario == f.Scenario && be != nil {
				switch f.Field {
				case "break-even":
					return be.Load, 1, nil
				case "break-even-lo":
					return be.Lo, 1, nil
				case "break-even-hi":
					return be.Hi, 1, nil
				case "break-even-batch":
					if be.Batch != nil {
						return be.Batch.Center, 1, nil
					}
				}
			}
		}
		return 0, 0, errors.New("no such break-even in verdict.json")
	}
	var l *verdict.Level
	for i := range v.Scenarios {
		if v.Scenarios[i].Name == f.Scenario {
			l = v.Scenarios[i].Level(levelOf(f.Level))
		}
	}
	if l == nil {
		return 0, 0, errors.New("no such scenario and level in verdict.json")
	}
	// The energy table's figures; the detail tables' are levelColumnsAt's.
	if e := l.Energy; e != nil {
		switch f.Field {
		case "energy":
			return e.JoulesPerKTok.Center, 1, nil
		case "energy-hw":
			return e.JoulesPerKTok.HalfWidthPct(), 1, nil
		case "power":
			return e.PowerW.Center, 1, nil
		}
	}
	if srv := l.Server; srv != nil {
		switch {
		case f.Field == fieldServerQueued && srv.Queued != nil:
			return srv.Queued.Mean, 1, nil
		case f.Field == fieldServerKV && srv.KVUsage != nil:
			return srv.KVUsage.Mean, 100, nil
		}
	}
	if f.Field == roundFigure.Field {
		for _, ll := range l.Launches {
			if ll.Round == f.Round {
				return ll.Throughput, 1, nil
			}
		}
		return 0, 0, errors.New("no such launch in verdict.json")
	}
	if fg, ok := figureByField(v.Percentiles, f.Field); ok {
		x, ok := fg.Of(l)
		if !ok {
			return 0, 0, errors.New("shown, but verdict.json has no such figure at this level")
		}
		return x, fg.scale(), nil
	}
	return 0, 0, fmt.Errorf("a figure this test does not know: add it to jsonFigure")
}

// shownMatches checks that text ("773.1", "−3.8", "p=0.002", "p<0.001")
// is want rounded to the digits it shows.
func shownMatches(text string, want float64) error {
	s := strings.NewReplacer("−", "-", "+", "", "p=", "").Replace(strings.TrimSpace(text))
	if bound, ok := strings.CutPrefix(s, "p<"); ok {
		b, err := strconv.ParseFloat(bound, 64)
		if err != nil || !(want < b) {
			return fmt.Errorf("shows %q, verdict.json has %v", text, want)
		}
		return nil
	}
	got, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("shows %q, not a number", text)
	}
	decimals := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		decimals = len(s) - i - 1
	}
	if tol := 0.5*math.Pow(10, -float64(decimals)) + 1e-9*math.Abs(want); math.Abs(got-want) > tol {
		return fmt.Errorf("shows %q, verdict.json has %v", text, want)
	}
	return nil
}

func TestHTMLSelfContained(t *testing.T) {
	v, _ := testVerdict(t)
	var buf bytes.Buffer
	if err := HTML(&buf, v); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, bad := range []string{"<script", "<link", "src=\"http", "href=\"http", "url(http", "@import"} {
		if strings.Contains(out, bad) {
			t.Errorf("the page contains %q: it must open offline, with nothing to fetch", bad)
		}
	}
	if n, want := strings.Count(out, `<svg class="plot"`), pagePlots(t, v); n != want {
		t.Errorf("%d inline SVG plots, want %d", n, want)
	}
	if strings.Contains(out, "<?xml") {
		t.Error("an XML prolog inside the HTML")
	}
	var again bytes.Buffer
	if err := HTML(&again, v); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two renderings of one verdict differ")
	}
	if _, err := json.Marshal(v); err != nil {
		t.Fatal(err)
	}
}

// withEnergy is v with GPU energy at every measured level but the lowest of
// each scenario, as a run with power readings has it, so the page shows the
// energy table, its columns and the levels without energy.
func withEnergy(v *verdict.Verdict) *verdict.Verdict {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var r verdict.Verdict
	if err := json.Unmarshal(data, &r); err != nil {
		panic(err)
	}
	for i := range r.Scenarios {
		for j := range r.Scenarios[i].Levels {
			l := &r.Scenarios[i].Levels[j]
			if j == 0 || l.Throughput.Center <= 0 {
				continue
			}
			w := 700 + 3.7*float64(l.Level.Concurrency)
			jk := w / l.Throughput.Center * 1000
			l.Energy = &verdict.LevelEnergy{
				PowerW:        verdict.Estimate{Center: w, Lo: w * 0.98, Hi: w * 1.02, Confidence: 0.95, N: 3},
				JoulesPerKTok: verdict.Estimate{Center: jk, Lo: jk * 0.97, Hi: jk * 1.031, Confidence: 0.95, N: 3},
			}
		}
	}
	return &r
}

// pagePlots is how many plots the page has: the run's and each level's.
func pagePlots(t *testing.T, v *verdict.Verdict) int {
	t.Helper()
	levels, err := levelPlotsHTML(v)
	if err != nil {
		t.Fatal(err)
	}
	n := len(plotBuilders(v))
	for _, l := range levels {
		n += len(l.Plots)
	}
	return n
}
