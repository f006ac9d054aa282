package media

import (
	"image"
	"math"
	"strconv"
)

// The demo's films: a few seconds each, 640 × 360 at 12 frames a second,
// drawn frame by frame. Their sound is given by the caller (a voice-over
// where one can be made, else a chime).

// ProgressFilm shows three topics of a lesson being finished one after
// the other while the progress bar fills, and the course complete.
func ProgressFilm(sound []int16, seconds float64) Clip {
	return Clip{Width: 640, Height: 360, FPS: 12, Seconds: seconds, Sound: sound, Draw: drawProgress}
}

func drawProgress(c *Canvas, t float64) {
	blue, green, grey := Hex("#1d4ed8"), Hex("#16a34a"), Hex("#cbd5e1")
	c.VGradient(Hex("#eff6ff"), paper)
	c.CenteredText(320, 28, 3, "YOUR PROGRESS", ink)
	labels := []string{"READ", "WATCH", "HAND IN"}
	done := 0
	for i, label := range labels {
		// Topic i is finished at 2, 4 and 6 seconds.
		finished := t >= float64(2+2*i)
		x := 120 + 200*i
		fill := grey
		if finished {
			fill = green
			done++
		}
		box(c, x, 130, 160, 80, fill, ink, label, 3)
		if finished {
			c.Line(x-14, 152, x-4, 161, 4, white)
			c.Line(x-4, 161, x+16, 146, 4, white)
		}
	}
	// The bar moves towards the share of finished topics.
	target := float64(done) / float64(len(labels))
	prev := float64(max(done-1, 0)) / float64(len(labels))
	since := t - float64(2*done)
	share := target
	if done > 0 && since < 0.6 {
		share = prev + (target-prev)*since/0.6
	}
	c.Rect(80, 230, 480, 28, grey)
	c.Rect(80, 230, int(480*share), 28, blue)
	c.CenteredText(320, 270, 2, strconv.Itoa(int(math.Round(share*100)))+" PERCENT DONE", ink)
	if t >= 7 {
		c.Rect(140, 300, 360, 44, green)
		c.CenteredText(320, 314, 2, "LESSON COMPLETE!", white)
	}
}

// ThirdsFilm shows a landscape under the grid of thirds while the sun
// crosses the sky; the grid's crossings light up as the sun meets them.
func ThirdsFilm(sound []int16, seconds float64) Clip {
	return Clip{Width: 640, Height: 360, FPS: 12, Seconds: seconds, Sound: sound,
		Draw: func(c *Canvas, t float64) { drawThirds(c, t/seconds) }}
}

func drawThirds(c *Canvas, f float64) {
	c.VGradient(Hex("#fb923c"), Hex("#fde68a"))
	// The sun rises from the left, crosses both upper crossings, and sets.
	x := int(40 + 560*f)
	y := int(120 + 110*math.Pow(2*f-1, 2) - 20)
	c.Disc(x, y, 28, Hex("#fff7ed"))
	c.Polygon([]image.Point{{0, 267}, {124, 204}, {267, 253}, {418, 213}, {640, 258}, {640, 360}, {0, 360}}, Hex("#65a30d"))
	c.Polygon([]image.Point{{0, 302}, {231, 267}, {640, 298}, {640, 360}, {0, 360}}, Hex("#3f6212"))
	c.Rect(209, 160, 9, 107, Hex("#422006"))
	c.Disc(213, 153, 37, Hex("#166534"))
	for i := 1; i <= 2; i++ {
		c.Rect(213*i+i-1, 0, 3, 360, white)
		c.Rect(0, 120*i-1, 640, 3, white)
	}
	for _, cx := range []int{214, 427} {
		if d := math.Hypot(float64(x-cx), float64(y-120)); d < 40 {
			c.Ring(cx, 120, 44, 38, Hex("#dc2626"))
		}
	}
	c.Text(16, 332, 2, "RULE OF THIRDS", white)
}
