package media

import (
	"image"
	"image/color"
	"math"
)

var (
	white = color.RGBA{255, 255, 255, 255}
	ink   = Hex("#1f2937")
	paper = Hex("#f8fafc")
	green = Hex("#16a34a")
)

// Cover is a 640 × 360 course image: a gradient, the course's motif on
// the right and its title in large letters at the bottom left.
func Cover(title, top, bottom string, motif func(c *Canvas)) []byte {
	c := NewCanvas(640, 360, Hex(top))
	c.VGradient(Hex(top), Hex(bottom))
	c.Text(36, 36, 2, "LMS DEMO COURSE", Mix(Hex(top), white, 0.7))
	if motif != nil {
		motif(c)
	}
	c.Text(36, 360-36-7*4, 4, title, white)
	return c.PNG()
}

// Cards is the motif of a getting-started course: a stack of cards, the
// front one ticked off.
func Cards(c *Canvas) {
	for i, shade := range []float64{0.55, 0.75, 1} {
		x, y := 360+22*i, 56+26*i
		c.Rect(x+6, y+6, 200, 130, color.RGBA{0, 0, 0, 40})
		c.Rect(x, y, 200, 130, Mix(Hex("#93c5fd"), white, shade))
		c.Rect(x, y, 200, 18, Mix(Hex("#1d4ed8"), white, 1-shade))
	}
	c.Line(470, 176, 492, 198, 8, green)
	c.Line(492, 198, 532, 150, 8, green)
}

// Padlock is the motif of a privacy course.
func Padlock(c *Canvas) {
	body := Hex("#ecfeff")
	c.Ring(515, 150, 62, 44, body)
	c.Rect(440, 150, 150, 124, body)
	c.Rect(440, 150, 150, 10, Hex("#a5f3fc"))
	c.Disc(515, 200, 13, Hex("#134e4a"))
	c.Rect(509, 200, 12, 40, Hex("#134e4a"))
}

// Aperture is the motif of a photography course: a lens with its blades.
func Aperture(c *Canvas) {
	cx, cy := 500, 160
	c.Disc(cx, cy, 100, Hex("#1c1917"))
	c.Ring(cx, cy, 100, 86, Hex("#fde68a"))
	var blades []image.Point
	for i := 0; i < 6; i++ {
		a := math.Pi/6 + float64(i)*math.Pi/3
		blades = append(blades, image.Pt(cx+int(58*math.Cos(a)), cy+int(58*math.Sin(a))))
	}
	c.Polygon(blades, Hex("#78350f"))
	for i := range blades {
		a, b := blades[i], blades[(i+1)%len(blades)]
		c.Line(a.X, a.Y, cx+int(1.5*float64(b.X-cx)), cy+int(1.5*float64(b.Y-cy)), 3, Hex("#44403c"))
	}
	c.Disc(cx-22, cy-24, 9, Mix(Hex("#fde68a"), white, 0.5))
}

// Choices is the motif of a course of interactive exercises: three
// answers, the right one ticked.
func Choices(c *Canvas) {
	for i := 0; i < 3; i++ {
		y := 62 + 70*i
		fill := Mix(Hex("#ede9fe"), white, 0.4)
		if i == 1 {
			fill = Hex("#dcfce7")
		}
		c.Rect(380, y, 220, 52, fill)
		c.Ring(408, y+26, 14, 10, Hex("#6d28d9"))
		c.Rect(436, y+18, 120-30*i, 8, Hex("#a78bfa"))
		c.Rect(436, y+32, 80+20*i, 6, Hex("#c4b5fd"))
	}
	c.Disc(408, 158, 7, green)
	c.Line(560, 150, 572, 162, 6, green)
	c.Line(572, 162, 592, 136, 6, green)
}

// box draws a labelled box centred on cx, cy.
func box(c *Canvas, cx, cy, w, h int, fill, text color.RGBA, label string, scale int) {
	c.Rect(cx-w/2+4, cy-h/2+4, w, h, color.RGBA{0, 0, 0, 30})
	c.Rect(cx-w/2, cy-h/2, w, h, fill)
	c.CenteredText(cx, cy-7*scale/2, scale, label, text)
}

// CourseMap shows how a course is built: lessons, and topics in them.
func CourseMap() []byte {
	c := NewCanvas(720, 405, paper)
	blue := Hex("#1d4ed8")
	c.CenteredText(360, 18, 2, "HOW A COURSE IS BUILT", ink)
	box(c, 360, 78, 200, 50, blue, white, "COURSE", 3)
	for i := 0; i < 3; i++ {
		x := 130 + 230*i
		c.Arrow(360, 104, x, 170, 3, Hex("#64748b"))
		box(c, x, 196, 170, 44, Hex("#93c5fd"), ink, "LESSON "+string(rune('1'+i)), 2)
		for j := 0; j < 3; j++ {
			y := 262 + 40*j
			c.Line(x-70, 218, x-70, y, 2, Hex("#94a3b8"))
			c.Line(x-70, y, x-50, y, 2, Hex("#94a3b8"))
			box(c, x+10, y, 120, 30, Hex("#dbeafe"), ink, "TOPIC", 2)
		}
	}
	return c.PNG()
}

// DataLifecycle shows personal data going round: collected, used,
// stored and deleted, always for a purpose.
func DataLifecycle() []byte {
	c := NewCanvas(720, 405, paper)
	teal := Hex("#0f766e")
	c.CenteredText(360, 18, 2, "THE LIFE OF PERSONAL DATA", ink)
	c.Ring(360, 215, 92, 88, Hex("#99f6e4"))
	c.Disc(360, 215, 70, Hex("#ccfbf1"))
	c.CenteredText(360, 208, 2, "PURPOSE", teal)
	steps := []struct {
		x, y  int
		label string
	}{{360, 82, "COLLECT"}, {600, 215, "USE"}, {360, 348, "STORE"}, {120, 215, "DELETE"}}
	for i, s := range steps {
		n := steps[(i+1)%len(steps)]
		c.Arrow(s.x+(n.x-s.x)/5, s.y+(n.y-s.y)/5, n.x-(n.x-s.x)/4, n.y-(n.y-s.y)/4, 4, Hex("#5eead4"))
	}
	for _, s := range steps {
		box(c, s.x, s.y, 170, 48, teal, white, s.label, 3)
	}
	return c.PNG()
}

// Identifiers shows the kinds of data that identify a person.
func Identifiers() []byte {
	c := NewCanvas(720, 405, paper)
	teal := Hex("#0f766e")
	c.CenteredText(360, 18, 2, "WHAT CAN IDENTIFY A PERSON", ink)
	labels := []string{"NAME", "E-MAIL", "PHONE", "ADDRESS", "IP ADDRESS", "PHOTO", "ID NUMBER", "LOCATION"}
	for i, l := range labels {
		a := -math.Pi/2 + float64(i)*2*math.Pi/float64(len(labels))
		x, y := 360+int(250*math.Cos(a)), 215+int(145*math.Sin(a))
		c.Line(360, 215, x, y, 2, Hex("#94a3b8"))
		box(c, x, y, 150, 36, Hex("#ccfbf1"), ink, l, 2)
	}
	c.Disc(360, 215, 48, teal)
	c.Disc(360, 198, 14, white)
	c.Polygon([]image.Point{{338, 250}, {344, 226}, {376, 226}, {382, 250}}, white)
	return c.PNG()
}

// ExposureTriangle shows the three settings that together make an
// exposure.
func ExposureTriangle() []byte {
	c := NewCanvas(720, 405, paper)
	amber := Hex("#b45309")
	a, b, d := image.Pt(360, 86), image.Pt(150, 330), image.Pt(570, 330)
	c.Polygon([]image.Point{a, b, d}, Hex("#fef3c7"))
	for _, e := range [][2]image.Point{{a, b}, {b, d}, {d, a}} {
		c.Line(e[0].X, e[0].Y, e[1].X, e[1].Y, 6, amber)
	}
	c.CenteredText(360, 236, 3, "EXPOSURE", amber)
	box(c, a.X, a.Y-26, 200, 44, amber, white, "APERTURE", 3)
	box(c, b.X, b.Y+30, 200, 44, amber, white, "SHUTTER", 3)
	box(c, d.X, d.Y+30, 200, 44, amber, white, "ISO", 3)
	c.Text(20, 20, 2, "DEPTH OF FIELD", Hex("#78716c"))
	c.Text(20, 385, 2, "MOTION BLUR", Hex("#78716c"))
	c.Text(590, 385, 2, "NOISE", Hex("#78716c"))
	return c.PNG()
}

// RuleOfThirds is a landscape composed on the thirds, with the grid
// drawn over it.
func RuleOfThirds() []byte {
	c := NewCanvas(720, 405, paper)
	c.VGradient(Hex("#fb923c"), Hex("#fde68a"))
	c.Disc(480, 135, 34, Hex("#fff7ed"))
	c.Polygon([]image.Point{{0, 300}, {140, 230}, {300, 285}, {470, 240}, {720, 290}, {720, 405}, {0, 405}}, Hex("#65a30d"))
	c.Polygon([]image.Point{{0, 340}, {260, 300}, {720, 335}, {720, 405}, {0, 405}}, Hex("#3f6212"))
	c.Rect(236, 180, 10, 120, Hex("#422006"))
	c.Disc(241, 172, 42, Hex("#166534"))
	grid := color.RGBA{255, 255, 255, 255}
	for i := 1; i <= 2; i++ {
		c.Rect(240*i-1, 0, 3, 405, grid)
		c.Rect(0, 135*i-1, 720, 3, grid)
	}
	for _, p := range []image.Point{{240, 135}, {480, 135}, {240, 270}, {480, 270}} {
		c.Ring(p.X, p.Y, 10, 6, white)
	}
	return c.PNG()
}
