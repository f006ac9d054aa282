// Package media makes the files of the demo seed in code: PNG pictures
// drawn on a canvas, PDF documents and a short audio clip. Nothing binary
// is kept in the repository, and the seed works offline.
package media

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
)

// Canvas is an RGBA picture with a few drawing operations, enough for
// covers and simple diagrams. Coordinates are pixels from the top left.
type Canvas struct {
	img *image.RGBA
}

// NewCanvas is a w × h canvas filled with bg.
func NewCanvas(w, h int, bg color.RGBA) *Canvas {
	c := &Canvas{img: image.NewRGBA(image.Rect(0, 0, w, h))}
	c.Rect(0, 0, w, h, bg)
	return c
}

// Hex parses "#rrggbb".
func Hex(s string) color.RGBA {
	var v [3]uint8
	for i := range v {
		v[i] = hexByte(s[1+2*i], s[2+2*i])
	}
	return color.RGBA{v[0], v[1], v[2], 255}
}

func hexByte(a, b byte) uint8 { return hexDigit(a)<<4 | hexDigit(b) }

func hexDigit(c byte) uint8 {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}

// Mix is the colour a fraction t of the way from a to b.
func Mix(a, b color.RGBA, t float64) color.RGBA {
	m := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + (float64(y)-float64(x))*t)) }
	return color.RGBA{m(a.R, b.R), m(a.G, b.G), m(a.B, b.B), 255}
}

// Width and Height are the canvas size.
func (c *Canvas) Width() int  { return c.img.Bounds().Dx() }
func (c *Canvas) Height() int { return c.img.Bounds().Dy() }

func (c *Canvas) set(x, y int, col color.RGBA) {
	if !image.Pt(x, y).In(c.img.Rect) {
		return
	}
	if col.A < 255 {
		// Translucent colours (shadows) are blended over what is there.
		col = Mix(c.img.RGBAAt(x, y), color.RGBA{col.R, col.G, col.B, 255}, float64(col.A)/255)
	}
	c.img.SetRGBA(x, y, col)
}

// Rect fills the rectangle with its top left at x, y.
func (c *Canvas) Rect(x, y, w, h int, col color.RGBA) {
	for j := y; j < y+h; j++ {
		for i := x; i < x+w; i++ {
			c.set(i, j, col)
		}
	}
}

// Frame draws the outline of a rectangle, t pixels thick.
func (c *Canvas) Frame(x, y, w, h, t int, col color.RGBA) {
	c.Rect(x, y, w, t, col)
	c.Rect(x, y+h-t, w, t, col)
	c.Rect(x, y, t, h, col)
	c.Rect(x+w-t, y, t, h, col)
}

// VGradient fills the canvas from top to bottom.
func (c *Canvas) VGradient(top, bottom color.RGBA) {
	h := c.Height()
	for y := 0; y < h; y++ {
		c.Rect(0, y, c.Width(), 1, Mix(top, bottom, float64(y)/float64(max(h-1, 1))))
	}
}

// Disc fills a circle.
func (c *Canvas) Disc(cx, cy, r int, col color.RGBA) {
	c.Ring(cx, cy, r, 0, col)
}

// Ring fills the band between radii inner and outer.
func (c *Canvas) Ring(cx, cy, outer, inner int, col color.RGBA) {
	for y := -outer; y <= outer; y++ {
		for x := -outer; x <= outer; x++ {
			d := x*x + y*y
			if d <= outer*outer && d >= inner*inner {
				c.set(cx+x, cy+y, col)
			}
		}
	}
}

// Line draws a line t pixels thick with round ends.
func (c *Canvas) Line(x0, y0, x1, y1, t int, col color.RGBA) {
	dx, dy := float64(x1-x0), float64(y1-y0)
	steps := int(math.Max(math.Abs(dx), math.Abs(dy)))
	r := max(t/2, 0)
	for i := 0; i <= steps; i++ {
		f := 0.0
		if steps > 0 {
			f = float64(i) / float64(steps)
		}
		x, y := x0+int(math.Round(dx*f)), y0+int(math.Round(dy*f))
		if r == 0 {
			c.set(x, y, col)
		} else {
			c.Disc(x, y, r, col)
		}
	}
}

// Arrow draws a line with a head at x1, y1.
func (c *Canvas) Arrow(x0, y0, x1, y1, t int, col color.RGBA) {
	c.Line(x0, y0, x1, y1, t, col)
	angle := math.Atan2(float64(y1-y0), float64(x1-x0))
	size := float64(4 * max(t, 2))
	for _, side := range []float64{math.Pi * 0.8, -math.Pi * 0.8} {
		hx := x1 + int(math.Round(size*math.Cos(angle+side)))
		hy := y1 + int(math.Round(size*math.Sin(angle+side)))
		c.Line(x1, y1, hx, hy, t, col)
	}
}

// Polygon fills the polygon through the points (even-odd rule).
func (c *Canvas) Polygon(pts []image.Point, col color.RGBA) {
	if len(pts) < 3 {
		return
	}
	minY, maxY := pts[0].Y, pts[0].Y
	for _, p := range pts {
		minY, maxY = min(minY, p.Y), max(maxY, p.Y)
	}
	for y := minY; y <= maxY; y++ {
		var xs []float64
		fy := float64(y) + 0.5
		for i := range pts {
			a, b := pts[i], pts[(i+1)%len(pts)]
			if (float64(a.Y) <= fy) == (float64(b.Y) <= fy) {
				continue
			}
			xs = append(xs, float64(a.X)+(fy-float64(a.Y))*float64(b.X-a.X)/float64(b.Y-a.Y))
		}
		sortFloats(xs)
		for i := 0; i+1 < len(xs); i += 2 {
			for x := int(math.Ceil(xs[i] - 0.5)); x <= int(math.Floor(xs[i+1]-0.5)); x++ {
				c.set(x, y, col)
			}
		}
	}
}

func sortFloats(v []float64) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

// PNG encodes the canvas.
func (c *Canvas) PNG() []byte {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&b, c.img); err != nil {
		// Encoding an in-memory RGBA image into a buffer cannot fail.
		panic(err)
	}
	return b.Bytes()
}
