package report

import (
	"fmt"
	"html/template"
	"image/color"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// scenarioPalette is the colour of each scenario, by its position in the
// campaign: Okabe and Ito's palette ("Color Universal Design", 2008), which
// stays distinct under the common colour-vision deficiencies. The order
// puts the most distinct four first, as most campaigns have four scenarios
// or fewer, and the yellow, hard to read on white, last.
var scenarioPalette = []color.NRGBA{
	{R: 0x00, G: 0x72, B: 0xb2, A: 0xff}, // blue
	{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}, // vermillion
	{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}, // bluish green
	{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff}, // reddish purple
	{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}, // orange
	{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff}, // sky blue
	{R: 0x00, G: 0x00, B: 0x00, A: 0xff}, // black
	{R: 0xf0, G: 0xe4, B: 0x42, A: 0xff}, // yellow
}

// scenarioDashes are the line styles that go with the colours, so that a
// line can be told from its neighbour printed in grey, too: solid, dashed,
// dotted, dash-dot, in points.
var scenarioDashes = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2.5)},
	{vg.Points(6), vg.Points(2.5), vg.Points(1.5), vg.Points(2.5)},
}

// scenarioShapes are the point markers that go with the colours.
var scenarioShapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
}

// Line and marker sizes of the plots, in points.
const (
	plotLineWidth  = 1.6
	plotGlyphSize  = 3
	plotBandAlpha  = 0x38 // a confidence band's fill: the line stays readable over it
	plotShadeAlpha = 0x22 // a break-even interval's fill, lighter than a band
)

// seriesStyle is how one scenario is drawn in every plot and beside its
// name in the tables: one colour, one line style, one marker.
type seriesStyle struct {
	Color  color.NRGBA
	Dashes []vg.Length
	Shape  draw.GlyphDrawer
}

// scenarioStyle is the style of the i-th scenario of the campaign. Past
// the palette's eight colours the colours repeat with the next line style,
// so that each pair of colour and line style stays one scenario's up to 32
// scenarios.
func scenarioStyle(i int) seriesStyle {
	n := len(scenarioPalette)
	return seriesStyle{
		Color:  scenarioPalette[i%n],
		Dashes: scenarioDashes[(i+i/n)%len(scenarioDashes)],
		Shape:  scenarioShapes[i%len(scenarioShapes)],
	}
}

// styleOf is the style of the named scenario: from its position in the
// campaign's order (v.Scenarios), whichever scenarios a plot shows, so
// that a scenario has one colour on every plot.
func styleOf(v *verdict.Verdict, name string) seriesStyle {
	for i, s := range v.Scenarios {
		if s.Name == name {
			return scenarioStyle(i)
		}
	}
	return scenarioStyle(len(v.Scenarios))
}

// line is the style's line.
func (s seriesStyle) line() draw.LineStyle {
	return draw.LineStyle{Color: s.Color, Width: vg.Points(plotLineWidth), Dashes: s.Dashes}
}

// glyph is the style's marker.
func (s seriesStyle) glyph() draw.GlyphStyle {
	return draw.GlyphStyle{Color: s.Color, Radius: vg.Points(plotGlyphSize), Shape: s.Shape}
}

// fill is the style's colour at alpha, for a band.
func (s seriesStyle) fill(alpha uint8) color.NRGBA {
	c := s.Color
	c.A = alpha
	return c
}

// linePoints is xy drawn in the style: a line through markers.
func (s seriesStyle) linePoints(xy plotter.XYs) (*plotter.Line, *plotter.Scatter, error) {
	l, p, err := plotter.NewLinePoints(xy)
	if err != nil {
		return nil, nil, err
	}
	l.LineStyle, p.GlyphStyle = s.line(), s.glyph()
	return l, p, nil
}

// hexColor is c as CSS writes it: "#0072b2".
func hexColor(c color.NRGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// Size of the swatch beside a scenario's name in the HTML tables, in CSS
// pixels: as long as a legend's line, so that its dashes show.
const (
	swatchWidth  = 26
	swatchHeight = 10
)

// swatchHTML is a scenario's line as a small inline SVG, to stand beside its
// name in a table as in the plots' legends: its colour and dashes, which the
// browser test compares with the plots'.
func swatchHTML(s seriesStyle) template.HTML {
	dash := ""
	if len(s.Dashes) > 0 {
		var d []string
		for _, l := range s.Dashes {
			d = append(d, fmt.Sprintf("%g", l.Points()))
		}
		dash = ` stroke-dasharray="` + strings.Join(d, " ") + `"`
	}
	return template.HTML(fmt.Sprintf(`<svg class="swatch" width="%d" height="%d" viewBox="0 0 %d %d" aria-hidden="true">`+
		`<line x1="1" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2.5"%s/></svg>`,
		swatchWidth, swatchHeight, swatchWidth, swatchHeight, swatchHeight/2, swatchWidth-1, swatchHeight/2, hexColor(s.Color), dash))
}
