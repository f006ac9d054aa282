package img_test

import (
	"image"
	"image/color"
	"strconv"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/media/img"
)

// photo is a 1200 × 800 PNG, the size of a typical uploaded picture.
func photo(b *testing.B) []byte {
	m := image.NewNRGBA(image.Rect(0, 0, 1200, 800))
	for y := 0; y < 800; y++ {
		for x := 0; x < 1200; x++ {
			m.SetNRGBA(x, y, color.NRGBA{uint8(x * 7), uint8(y * 3), uint8(x ^ y), 255})
		}
	}
	return encodePNG(b, m)
}

// BenchmarkRenderCold renders a 1200 × 800 PNG to a 400-pixel-wide image
// in each format: the work of a rendering not yet cached.
func BenchmarkRenderCold(b *testing.B) {
	src := photo(b)
	for _, format := range []string{"jpeg", "png", "webp"} {
		b.Run(format, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := img.Render(src, img.Options{Width: 400, Format: format}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "renders/s")
		})
	}
}

// BenchmarkEndpoint is GET /api/img through the whole server on SQLite:
// cached (the same rendering again) and cold (a new width each time, so
// each request decodes, resizes, encodes webp and writes the cache).
func BenchmarkEndpoint(b *testing.B) {
	env := apitest.New(b, "sqlite", apitest.Options{})
	apitest.Must(env.ClientAs("admin").PostAdminConfig(b.Context(), client.UpdateInputBody{Config: []client.Item{
		{Key: "images.private.rate_limiter_status", Value: "disabled"}}}))(b)
	q := storeFile(b, env, "images/photo.png", photo(b))
	get := func(b *testing.B, w int) {
		res := render(env, "GET", q, map[string]string{"w": strconv.Itoa(w), "format": "webp"})
		if res.Status != 200 {
			b.Fatalf("%d %s", res.Status, res.Body)
		}
	}
	b.Run("cached", func(b *testing.B) {
		get(b, 300)
		for b.Loop() {
			get(b, 300)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "renders/s")
	})
	b.Run("cold", func(b *testing.B) {
		w := 400
		for b.Loop() {
			w++
			get(b, w)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "renders/s")
	})
}
