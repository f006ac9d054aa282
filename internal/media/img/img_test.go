package img_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	_ "image/jpeg"
	"image/png"
	"net/url"
	"testing"
	"time"

	_ "github.com/gen2brain/webp"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// sample is a 300 × 200 PNG with a gradient and transparency.
func sample(t testing.TB) []byte {
	m := image.NewNRGBA(image.Rect(0, 0, 300, 200))
	for y := 0; y < 200; y++ {
		for x := 0; x < 300; x++ {
			m.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), 128, uint8(128 + x%128)})
		}
	}
	return encodePNG(t, m)
}

func encodePNG(t testing.TB, m image.Image) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bomb is a valid small PNG whose header claims 100,000 × 100,000 pixels:
// decoding it would ask for 40 GB.
func bomb(t testing.TB) []byte {
	b := append([]byte(nil), apitest.PNG(t)...)
	// IHDR's data is bytes 16 to 29 (width, height, ...), its CRC 29 to 33.
	binary.BigEndian.PutUint32(b[16:], 100_000)
	binary.BigEndian.PutUint32(b[20:], 100_000)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	return b
}

// store puts a file into the default tenant's store and returns the query
// of its signed link.
func store(t *testing.T, env *apitest.Env, key string, data []byte) url.Values {
	return storeFile(t, env, key, data)
}

func storeFile(t testing.TB, env *apitest.Env, key string, data []byte) url.Values {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	if err := tenant.Blob.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)), "image/png"); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(env.Server.Files.URL(tenant, key))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("key", key)
	return q
}

func render(env *apitest.Env, method string, q url.Values, extra map[string]string) *apitest.Response {
	q2 := url.Values{}
	for k, v := range q {
		q2[k] = v
	}
	for k, v := range extra {
		q2.Set(k, v)
	}
	if method == "GET" {
		return env.Do(apitest.Request{Method: "GET", Path: "/api/img?" + q2.Encode()})
	}
	body := map[string]any{}
	for k := range q2 {
		body[k] = q2.Get(k)
	}
	for _, k := range []string{"expires", "w", "h", "quality"} {
		if v := q2.Get(k); v != "" {
			var n int64
			for _, c := range v {
				n = n*10 + int64(c-'0')
			}
			body[k] = n
		}
	}
	return env.Do(apitest.Request{Method: "POST", Path: "/api/img", Body: body})
}

func decoded(t *testing.T, res *apitest.Response, format string, w, h int) {
	t.Helper()
	if res.Status != 200 || res.Header.Get("Content-Type") != "image/"+format {
		t.Fatalf("%d %s: %.200s", res.Status, res.Header.Get("Content-Type"), res.Body)
	}
	cfg, got, err := image.DecodeConfig(bytes.NewReader(res.Body))
	if err != nil || got != format || cfg.Width != w || cfg.Height != h {
		t.Fatalf("decoded %s %d × %d (%v), want %s %d × %d", got, cfg.Width, cfg.Height, err, format, w, h)
	}
}

func TestImageRenderer(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		q := store(t, env, "images/sample.png", sample(t))

		res := render(env, "GET", q, map[string]string{"w": "150", "format": "webp", "quality": "70"})
		decoded(t, res, "webp", 150, 100)
		if res.Header.Get("X-Cache") != "miss" {
			t.Errorf("first rendering: X-Cache %q", res.Header.Get("X-Cache"))
		}
		again := render(env, "GET", q, map[string]string{"w": "150", "format": "webp", "quality": "70"})
		if again.Header.Get("X-Cache") != "hit" || !bytes.Equal(again.Body, res.Body) {
			t.Errorf("second rendering: X-Cache %q", again.Header.Get("X-Cache"))
		}

		scenarios := []struct {
			name, method string
			params       map[string]string
			format       string
			w, h         int
			status       int
		}{
			{"cover crops to the box", "POST", map[string]string{"w": "50", "h": "50", "fit": "cover", "format": "jpeg", "quality": "60"}, "jpeg", 50, 50, 200},
			{"contain keeps proportions", "GET", map[string]string{"w": "100", "h": "100"}, "png", 100, 66, 200},
			{"fill stretches", "GET", map[string]string{"w": "40", "h": "90", "fit": "fill"}, "png", 40, 90, 200},
			{"height alone", "POST", map[string]string{"h": "20", "format": "png"}, "png", 30, 20, 200},
			{"crop first", "GET", map[string]string{"crop": "10,10,20,30"}, "png", 20, 30, 200},
			{"crop outside", "GET", map[string]string{"crop": "290,0,20,20"}, "", 0, 0, 422},
			{"unknown format", "GET", map[string]string{"format": "bmp"}, "", 0, 0, 422},
			{"output over the cap", "GET", map[string]string{"w": "4096", "h": "4096", "fit": "fill"}, "", 0, 0, 413},
			{"side over the cap", "GET", map[string]string{"w": "5000"}, "", 0, 0, 422},
			{"bad signature", "GET", map[string]string{"signature": "00"}, "", 0, 0, 403},
			{"other file", "GET", map[string]string{"key": "images/none.png"}, "", 0, 0, 403},
		}
		for _, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				res := render(env, sc.method, q, sc.params)
				if sc.status != 200 {
					if res.Status != sc.status || res.Get("success") != false || res.String("message") == "" {
						t.Fatalf("status %d, want %d: %s", res.Status, sc.status, res.Body)
					}
					return
				}
				decoded(t, res, sc.format, sc.w, sc.h)
			})
		}

		// Decompression bombs and files that are not images are refused
		// with a message that says so.
		b := render(env, "GET", store(t, env, "images/bomb.png", bomb(t)), map[string]string{"w": "10"})
		if b.Status != 413 || b.String("message") == "" {
			t.Errorf("bomb: %d %s", b.Status, b.Body)
		}
		txt := render(env, "POST", store(t, env, "images/notes.png", []byte("just some text, not an image")), nil)
		if txt.Status != 422 {
			t.Errorf("text: %d %s", txt.Status, txt.Body)
		}
		// Another tenant's host does not take this tenant's links.
		env.AddTenant("other.test")
		if res := env.Do(apitest.Request{Method: "GET", Host: "other.test", Path: "/api/img?" + q.Encode()}); res.Status != 403 {
			t.Errorf("another tenant: %d", res.Status)
		}
	})
}

func TestImageRendererLimits(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	admin := env.ClientAs("admin")
	q := store(t, env, "images/sample.png", sample(t))
	config := func(status string, global, perIP int) {
		apitest.Must(admin.PostAdminConfig(t.Context(), client.UpdateInputBody{Config: []client.Item{
			{Key: "images.private.rate_limiter_status", Value: status},
			{Key: "images.private.rate_limit_global", Value: global},
			{Key: "images.private.rate_limit_per_ip", Value: perIP}}}))(t)
		env.Clock.Advance(time.Minute) // a fresh window
	}
	params := map[string]string{"w": "10"}

	// Per IP: POST is always limited.
	config("enabled", 100, 3)
	for i := 0; i < 3; i++ {
		if res := render(env, "POST", q, params); res.Status != 200 {
			t.Fatalf("POST %d: %d", i, res.Status)
		}
	}
	res := render(env, "POST", q, params)
	if res.Status != 429 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("fourth POST: %d %v", res.Status, res.Header)
	}
	// GET is limited while the limiter is enabled...
	if res := render(env, "GET", q, params); res.Status != 429 {
		t.Errorf("GET with the limiter on: %d", res.Status)
	}
	// ...and not while it is disabled, when POST still is.
	config("disabled", 100, 2)
	for i := 0; i < 5; i++ {
		if res := render(env, "GET", q, params); res.Status != 200 {
			t.Fatalf("GET %d with the limiter off: %d", i, res.Status)
		}
	}
	render(env, "POST", q, params)
	render(env, "POST", q, params)
	if res := render(env, "POST", q, params); res.Status != 429 {
		t.Errorf("POST with the limiter off: %d", res.Status)
	}
	// The host's overall limit counts every IP.
	config("enabled", 2, 100)
	render(env, "GET", q, params)
	render(env, "POST", q, params)
	if res := render(env, "GET", q, params); res.Status != 429 {
		t.Errorf("over the host's limit: %d", res.Status)
	}
	// The window passes.
	env.Clock.Advance(time.Minute)
	if res := render(env, "GET", q, params); res.Status != 200 {
		t.Errorf("next window: %d", res.Status)
	}
}
