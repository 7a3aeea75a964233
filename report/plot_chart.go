package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plot sizes. The page scales a plot to its column, so the width sets
// how large the text is on a screen: at PlotWidth a phone's 390 px column
// (about 372 px of plot) shows plotTickSize as 9.5 px, the smallest text
// the browser test accepts being 9.
const (
	PlotWidth = 6 * vg.Inch
	// PlotHeight is the height of the axes and data; the title and the
	// legend above them add to it.
	PlotHeight = 3.75 * vg.Inch
	// plotPNGDPI is the PNG files' resolution: 864 px across, sharp on a
	// slide.
	plotPNGDPI = 144
)

// Text sizes of the plots, in points (viewBox units of the SVG).
const (
	plotTitleSize  = 13
	plotLabelSize  = 12
	plotTickSize   = 11
	plotLegendSize = 11
)

// Spacing of the plots' frame, in points: the margin around everything,
// the gap between the title, the legend and the axes, and a legend's
// swatch, the gap after it, the gap between entries and between rows.
const (
	plotMargin     = 6
	plotGap        = 6
	legendSwatch   = 24
	legendSwatchGp = 4
	legendEntryGap = 14
	legendRowGap   = 3
)

// plotFont is the plots' typeface; plotFontFamily says how the SVG names it.
var plotFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// chart is one plot as the report draws it: gonum's plot for the axes and
// the data, under a title and a legend of its own. gonum draws its legend
// inside the data area, where it hides the lines; this one sits above the
// axes, its entries flowing in rows across the width, each entry's swatch
// before its text.
type chart struct {
	p      *plot.Plot
	title  string
	legend []legendEntry
}

// legendEntry is one line of a legend: its swatches, drawn by the
// plotters they show, then its label.
type legendEntry struct {
	label, scenario string
	thumbs          []plot.Thumbnailer
}

// newChart is an empty chart with the report's fonts and sizes.
func newChart(title, xlabel, ylabel string) *chart {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(plotFont, plotLabelSize)
		a.Tick.Label.Font = font.From(plotFont, plotTickSize)
		a.Label.Padding = vg.Points(2)
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = numTicks{}, numTicks{}
	return &chart{p: p, title: title}
}

// add adds the plotters of one series: drawn tagged class and scenario in
// the SVG, and, when label is set, a legend entry showing those of them
// that have a thumbnail. A series' markers and error bars are tagged
// "points" and "bars" whatever class says: they are drawn solid where the
// line has dashes.
func (c *chart) add(label, scenario, class string, ps ...plot.Plotter) {
	e := legendEntry{label: label, scenario: scenario}
	for _, p := range ps {
		tag := svgTag{Class: class, Scenario: scenario}
		switch p.(type) {
		case *plotter.Scatter:
			tag.Class = "points"
		case *plotter.YErrorBars:
			tag.Class = "bars"
		}
		c.p.Add(taggedPlotter{Plotter: p, tag: tag})
		if t, ok := p.(plot.Thumbnailer); ok {
			e.thumbs = append(e.thumbs, t)
		}
	}
	if label != "" {
		c.legend = append(c.legend, e)
	}
}

// note is a legend entry with no line: what is missing, and why.
func (c *chart) note(label, scenario string) {
	c.legend = append(c.legend, legendEntry{label: label, scenario: scenario})
}

// layout is where a chart's title and legend go, for its width.
type layout struct {
	title  []string
	rows   [][]legendSlot
	height vg.Length // of everything
	top    vg.Length // title and legend, with their gaps
}

// legendSlot is one entry placed: x from the legend's left edge, the
// width of its text.
type legendSlot struct {
	e     legendEntry
	x, tw vg.Length
}

func face(size vg.Length, w xfont.Weight) font.Face {
	f := plotFont
	f.Weight = w
	return font.DefaultCache.Lookup(f, size)
}

// lineHeight is a line of f: ascent and descent, no leading.
func lineHeight(f font.Face) vg.Length {
	e := f.Extents()
	return e.Ascent + e.Descent
}

func (c *chart) layout(w vg.Length) layout {
	inner := w - 2*plotMargin
	var l layout
	tf := face(plotTitleSize, xfont.WeightBold)
	l.title = wrap(tf, c.title, inner)
	lf := face(plotLegendSize, xfont.WeightNormal)
	var row []legendSlot
	var x vg.Length
	for _, e := range c.legend {
		tw := lf.Width(e.label)
		ew := tw
		if len(e.thumbs) > 0 {
			ew += legendSwatch + legendSwatchGp
		}
		if len(row) > 0 && x+ew > inner {
			l.rows = append(l.rows, row)
			row, x = nil, 0
		}
		row = append(row, legendSlot{e: e, x: x, tw: tw})
		x += ew + legendEntryGap
	}
	if len(row) > 0 {
		l.rows = append(l.rows, row)
	}
	l.top = plotMargin + vg.Length(len(l.title))*lineHeight(tf) + plotGap
	if len(l.rows) > 0 {
		l.top += vg.Length(len(l.rows))*(lineHeight(lf)+legendRowGap) + plotGap
	}
	l.height = l.top + PlotHeight + plotMargin
	return l
}

// wrap breaks s into lines no wider than w, at spaces.
func wrap(f font.Face, s string, w vg.Length) []string {
	if s == "" {
		return nil
	}
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && f.Width(line+" "+word) > w {
			out = append(out, line)
			line = word
			continue
		}
		line = strings.TrimPrefix(line+" "+word, " ")
	}
	return append(out, line)
}

// draw draws the chart on dc, laid out as l.
func (c *chart) draw(dc draw.Canvas, l layout) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	h := dc.Max.Y - dc.Min.Y
	y := dc.Max.Y - plotMargin
	tf := face(plotTitleSize, xfont.WeightBold)
	for _, line := range l.title {
		y -= lineHeight(tf)
		withTag(dc, svgTag{Class: "title"}, func() {
			dc.SetColor(color.Black)
			dc.FillString(tf, vg.Point{X: dc.Center().X - tf.Width(line)/2, Y: y + tf.Extents().Descent}, line)
		})
	}
	y -= plotGap
	lf := face(plotLegendSize, xfont.WeightNormal)
	lh := lineHeight(lf)
	left := dc.Min.X + plotMargin
	for _, row := range l.rows {
		top := y
		y -= lh + legendRowGap
		mid := (top + y) / 2
		for _, s := range row {
			x := left + s.x
			if len(s.e.thumbs) > 0 {
				sw := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
					Min: vg.Point{X: x, Y: mid - lh/2}, Max: vg.Point{X: x + legendSwatch, Y: mid + lh/2}}}
				withTag(dc, svgTag{Class: "swatch", Scenario: s.e.scenario}, func() {
					for _, t := range s.e.thumbs {
						t.Thumbnail(&sw)
					}
				})
				x += legendSwatch + legendSwatchGp
			}
			// The room the text was given, up to where the next entry
			// begins, in the viewBox's units (y down).
			box := fmt.Sprintf("%.1f %.1f %.1f %.1f", x.Points(), (h - top).Points(), (x + s.tw + legendEntryGap).Points(), (h - y).Points())
			withTag(dc, svgTag{Class: "legend", Scenario: s.e.scenario, Box: box}, func() {
				dc.SetColor(color.Black)
				// The baseline centres the ascent and descent on the row.
				e := lf.Extents()
				dc.FillString(lf, vg.Point{X: x, Y: mid - (e.Ascent-e.Descent)/2}, s.e.label)
			})
		}
	}
	body := dc
	body.Min.X += plotMargin
	body.Max.X -= plotMargin
	body.Min.Y += plotMargin
	body.Max.Y = dc.Max.Y - l.top
	c.p.Draw(body)
}

// withTag draws with tag current when dc is an SVG being annotated.
func withTag(dc draw.Canvas, tag svgTag, f func()) {
	if s := svgOf(dc.Canvas); s != nil {
		s.tagged(tag, f)
		return
	}
	f()
}

// svgOf is the svgCanvas under c, or nil: gonum hands its plotters a
// draw.Canvas wrapped in another (plot.Draw's padding).
func svgOf(c vg.Canvas) *svgCanvas {
	for {
		switch x := c.(type) {
		case *svgCanvas:
			return x
		case draw.Canvas:
			c = x.Canvas
		case *draw.Canvas:
			c = x.Canvas
		default:
			return nil
		}
	}
}

// encode draws the chart in the format ext ("png", "svg").
func (c *chart) encode(ext string) ([]byte, error) {
	l := c.layout(PlotWidth)
	var buf bytes.Buffer
	switch ext {
	case "svg":
		sc := newSVGCanvas(PlotWidth, l.height)
		c.draw(draw.New(sc), l)
		if _, err := sc.WriteTo(&buf); err != nil {
			return nil, err
		}
		return sc.annotate(buf.Bytes())
	case "png":
		ic := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(PlotWidth, l.height), vgimg.UseDPI(plotPNGDPI))}
		c.draw(draw.New(ic), l)
		if _, err := ic.WriteTo(&buf); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return nil, fmt.Errorf("no plot format %q", ext)
}

// taggedPlotter is a plotter whose elements, in an SVG, carry tag: the
// plot's data as the page's scripts and tests find it.
type taggedPlotter struct {
	plot.Plotter
	tag svgTag
}

var (
	_ plot.DataRanger = taggedPlotter{}
	_ plot.GlyphBoxer = taggedPlotter{}
)

func (t taggedPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	withTag(c, t.tag, func() { t.Plotter.Plot(c, p) })
}

// DataRange is the plotter's, or none when it has none (a grid).
func (t taggedPlotter) DataRange() (xmin, xmax, ymin, ymax float64) {
	if d, ok := t.Plotter.(plot.DataRanger); ok {
		return d.DataRange()
	}
	return math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
}

func (t taggedPlotter) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	if g, ok := t.Plotter.(plot.GlyphBoxer); ok {
		return g.GlyphBoxes(p)
	}
	return nil
}

// labelStyle is the text of a label on the data, in col.
func labelStyle(col color.Color) text.Style {
	return text.Style{Color: col, Font: font.From(plotFont, plotTickSize), Handler: plot.DefaultTextHandler}
}
