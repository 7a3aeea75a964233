package report

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// labelRoom is the share of a value axis's span kept free above the data
// per row of labels, so that a label at the top never covers a line.
const labelRoom = 0.12

// labelPad is the room around a label's text, in points.
const labelPad = 2

// vBand is a vertical band across the whole height of the data, from x lo
// to hi, filled with Color and edged with LineStyle; with lo equal to hi it
// is a vertical line. It widens the x range to itself and leaves the y
// range to the data.
type vBand struct {
	lo, hi float64
	Color  color.Color
	draw.LineStyle
}

var (
	_ plot.Plotter     = (*vBand)(nil)
	_ plot.DataRanger  = (*vBand)(nil)
	_ plot.Thumbnailer = (*vBand)(nil)
)

func (b *vBand) Plot(c draw.Canvas, p *plot.Plot) {
	tx, _ := p.Transforms(&c)
	x0, x1 := max(tx(b.lo), c.Min.X), min(tx(b.hi), c.Max.X)
	if x1 < x0 {
		return // off the axis
	}
	if b.Color != nil {
		c.FillPolygon(b.Color, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	}
	if b.LineStyle.Width > 0 && b.lo == b.hi {
		c.StrokeLine2(b.LineStyle, x0, c.Min.Y, x0, c.Max.Y)
	}
}

func (b *vBand) DataRange() (xmin, xmax, ymin, ymax float64) {
	return b.lo, b.hi, math.Inf(1), math.Inf(-1)
}

// Thumbnail is the band filling the swatch, or the line standing in its
// middle.
func (b *vBand) Thumbnail(c *draw.Canvas) {
	if b.Color != nil {
		c.FillPolygon(b.Color, []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
	}
	if b.LineStyle.Width > 0 {
		x := c.Center().X
		c.StrokeLine2(b.LineStyle, x, c.Min.Y, x, c.Max.Y)
	}
}

// plotLabel is a text at the top of the data area, centred on x (kept
// inside the area), on a white ground: the label of a vertical line, in
// its colour. Row 0 is the top row; each next row sits a line lower.
type plotLabel struct {
	text  string
	x     float64
	row   int
	color color.Color
	tag   svgTag
}

var _ plot.Plotter = plotLabel{}

func (l plotLabel) Plot(c draw.Canvas, p *plot.Plot) {
	tx, _ := p.Transforms(&c)
	f := face(plotTickSize, 0)
	w := f.Width(l.text)
	e := f.Extents()
	h := e.Ascent + e.Descent
	x := min(max(tx(l.x)-w/2, c.Min.X+labelPad), c.Max.X-labelPad-w)
	top := c.Max.Y - labelPad - vg.Length(l.row)*(h+2*labelPad)
	c.FillPolygon(color.White, []vg.Point{
		{X: x - labelPad, Y: top - h - labelPad}, {X: x + w + labelPad, Y: top - h - labelPad},
		{X: x + w + labelPad, Y: top + labelPad}, {X: x - labelPad, Y: top + labelPad}})
	withTag(c, l.tag, func() {
		c.SetColor(l.color)
		c.FillString(f, vg.Point{X: x, Y: top - e.Ascent}, l.text)
	})
}
