package report

import (
	"bytes"
	"fmt"
	"html"
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// plotFontFamily is the family every plot text is written in, in the SVG,
// and the reason the text fits its place wherever the SVG is opened.
//
// gonum lays a plot out with the metrics of the Liberation fonts it embeds
// (Liberation Sans here), but an SVG only names its font: a viewer without
// it substitutes another, wider or narrower, and a legend's text runs past
// its box over the swatches. Three ways out were weighed. Text drawn as
// glyph outlines is exact but stops being text (no search, no copy, no
// screen reader) and costs kilobytes per label; the font embedded with
// @font-face is exact but adds 550 kB per face (a 410 kB font in base64) to
// every file. What is done
// instead costs nothing and keeps the text: the family list falls back to
// the fonts metric-compatible with Liberation Sans (Arimo is its Google
// twin, Arial is on Windows and macOS, Helvetica on iOS), which lay out to
// the same widths, and every <text> carries the width gonum measured as
// textLength, with lengthAdjust="spacingAndGlyphs", so that any other
// font, a phone's Roboto or a desktop's DejaVu, is stretched or squeezed to
// exactly that width. Heights differ by a pixel at most between sans fonts
// of one size, which the layout's padding absorbs.
const plotFontFamily = `'Liberation Sans',Arimo,Arial,Helvetica,sans-serif`

// svgTag is what one drawn element shows, written on it as attributes so
// that the page's tests and scripts can find a scenario's lines and the
// legend's entries: class (what it is: line, band, swatch, legend,
// label), data-scenario, and for a legend's text data-box, the room the
// layout gave it ("x0 y0 x1 y1" in the SVG's viewBox units, y down).
type svgTag struct {
	Class, Scenario, Box string
}

// svgCanvas is vgsvg's canvas noting, for each <path> and <text> it
// writes, the tag current when it was drawn and, for text, the width the
// text was laid out at; annotate writes both into the SVG.
type svgCanvas struct {
	*vgsvg.Canvas
	tag svgTag
	// widths mirrors vgsvg's stack of line widths: a stroke at width 0
	// writes no element, and the n-th tag must go to the n-th element.
	widths []vg.Length
	paths  []svgTag
	texts  []svgText
}

type svgText struct {
	tag   svgTag
	width vg.Length
}

// newSVGCanvas is a canvas of w×h points.
func newSVGCanvas(w, h vg.Length) *svgCanvas {
	// vgsvg.New sets the width of a fresh canvas to 1 point (vg.Initialize).
	return &svgCanvas{Canvas: vgsvg.New(w, h), widths: []vg.Length{vg.Points(1)}}
}

// tagged draws with tag current, then restores the one before.
func (c *svgCanvas) tagged(tag svgTag, draw func()) {
	old := c.tag
	c.tag = tag
	draw()
	c.tag = old
}

func (c *svgCanvas) SetLineWidth(w vg.Length) {
	c.widths[len(c.widths)-1] = w
	c.Canvas.SetLineWidth(w)
}

func (c *svgCanvas) Push() {
	c.widths = append(c.widths, c.widths[len(c.widths)-1])
	c.Canvas.Push()
}

func (c *svgCanvas) Pop() {
	c.widths = c.widths[:len(c.widths)-1]
	c.Canvas.Pop()
}

func (c *svgCanvas) Stroke(p vg.Path) {
	if c.widths[len(c.widths)-1] <= 0 {
		return // vgsvg writes nothing
	}
	c.paths = append(c.paths, c.tag)
	c.Canvas.Stroke(p)
}

func (c *svgCanvas) Fill(p vg.Path) {
	c.paths = append(c.paths, c.tag)
	c.Canvas.Fill(p)
}

func (c *svgCanvas) FillString(f font.Face, pt vg.Point, s string) {
	c.texts = append(c.texts, svgText{tag: c.tag, width: f.Width(s)})
	c.Canvas.FillString(f, pt, s)
}

// svgFamilyOf is the font-family vgsvg writes for the Liberation fonts.
var svgFamilyOf = []string{"font-family:Liberation Sans;", "font-family:Liberation Serif;", "font-family:Liberation Mono;"}

// annotate writes into svg, the canvas's output, each text's laid-out
// width (plotFontFamily says why), each element's tag, and the family list.
func (c *svgCanvas) annotate(svg []byte) ([]byte, error) {
	var out bytes.Buffer
	out.Grow(len(svg) + 64*len(c.texts))
	np, nt := 0, 0
	rest := svg
	for {
		ip, it := bytes.Index(rest, []byte("<path ")), bytes.Index(rest, []byte("<text "))
		if ip < 0 && it < 0 {
			break
		}
		var attrs string
		var i int
		if it < 0 || (ip >= 0 && ip < it) {
			i = ip + len("<path")
			if np >= len(c.paths) {
				return nil, fmt.Errorf("annotating the SVG: more <path> elements than strokes and fills (%d)", len(c.paths))
			}
			attrs = c.paths[np].attrs()
			np++
		} else {
			i = it + len("<text")
			if nt >= len(c.texts) {
				return nil, fmt.Errorf("annotating the SVG: more <text> elements than strings drawn (%d)", len(c.texts))
			}
			t := c.texts[nt]
			nt++
			attrs = t.tag.attrs()
			if t.width > 0 {
				attrs += fmt.Sprintf(` textLength="%.5g" lengthAdjust="spacingAndGlyphs"`, t.width.Points())
			}
		}
		out.Write(rest[:i])
		out.WriteString(attrs)
		rest = rest[i:]
	}
	out.Write(rest)
	if np != len(c.paths) || nt != len(c.texts) {
		return nil, fmt.Errorf("annotating the SVG: %d <path> and %d <text> elements for %d strokes and fills and %d strings", np, nt, len(c.paths), len(c.texts))
	}
	b := out.Bytes()
	for _, f := range svgFamilyOf {
		b = bytes.ReplaceAll(b, []byte(f), []byte("font-family:"+plotFontFamily+";"))
	}
	return b, nil
}

// attrs is the tag as attributes, each with its leading space.
func (t svgTag) attrs() string {
	var b strings.Builder
	for _, a := range []struct{ name, value string }{{"class", t.Class}, {"data-scenario", t.Scenario}, {"data-box", t.Box}} {
		if a.value != "" {
			fmt.Fprintf(&b, ` %s="%s"`, a.name, html.EscapeString(a.value))
		}
	}
	return b.String()
}
