package img

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/files"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/limit"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/settings"
)

// Service serves GET|POST /api/img.
type Service struct {
	Files    *files.Signer
	Limiter  limit.Limiter
	Settings *settings.Service
}

// Request names a stored image by its signed link's parts and says how to
// render it.
type Request struct {
	Key       string `json:"key" query:"key" required:"true" maxLength:"1024" doc:"Blob key of the image, as in its signed link /api/files/<key>."`
	Expires   int64  `json:"expires" query:"expires" required:"true" doc:"expires of the image's signed link."`
	Signature string `json:"signature" query:"signature" required:"true" maxLength:"128" doc:"signature of the image's signed link."`
	Width     int    `json:"w,omitempty" query:"w" minimum:"0" maximum:"4096" doc:"Width in pixels; 0 or omitted: from the height, or the source's."`
	Height    int    `json:"h,omitempty" query:"h" minimum:"0" maximum:"4096" doc:"Height in pixels; 0 or omitted: from the width, or the source's."`
	Fit       string `json:"fit,omitempty" query:"fit" enum:"contain,cover,fill," doc:"contain (default): inside the box, proportions kept; cover: fills the box, the overflow cropped at the centre; fill: stretched to the box."`
	Format    string `json:"format,omitempty" query:"format" enum:"webp,jpeg,png," doc:"Output format; omitted: jpeg for a JPEG source, png otherwise."`
	Quality   int    `json:"quality,omitempty" query:"quality" minimum:"0" maximum:"100" doc:"1 to 100 for jpeg and webp (default 80)."`
	Crop      string `json:"crop,omitempty" query:"crop" maxLength:"64" pattern:"^[0-9, ]*$" doc:"x,y,width,height in source pixels, cut before resizing."`
}

type getInput struct {
	Request
}

type postInput struct {
	Body Request
}

type imageOutput struct {
	ContentType  string `header:"Content-Type"`
	CacheControl string `header:"Cache-Control"`
	Cache        string `header:"X-Cache" doc:"hit when the rendering came from the store's cache, miss when it was made now."`
	Body         []byte
}

const doc = "Renders an image of the tenant's store: resized (w, h, fit), cropped (crop) and converted (format, " +
	"quality). The image is named by the parts of its signed link (key, expires, signature), which are the " +
	"authority to read it. The output is at most 4096 pixels a side and 16 million pixels; the source at most " +
	"32 MiB and 40 million pixels, checked from its header before it is decoded, so decompression bombs answer " +
	"413; a file that is not a PNG, JPEG, GIF or WebP image answers 422. Renderings are cached in the tenant's " +
	"store under img-cache/. Rate limits (Limits table): images.private.rate_limit_global a minute per tenant " +
	"host (default 10,000) and images.private.rate_limit_per_ip per IP (default 1,000); POST always, GET only " +
	"while images.private.rate_limiter_status is enabled. GET and POST take the same fields (query or JSON body)."

// Routes registers GET and POST /api/img.
func Routes(api huma.API, s *Service) {
	route := func(method string) httpx.Route {
		// The signed link the image names is the authority to render it:
		// any scoped token may.
		return httpx.Route{Method: method, Path: "/api/img", Tags: []string{"images"}, Description: doc,
			Scope:   httpx.AnyToken,
			Summary: "Resize, crop and convert an image of the tenant's store", Errors: []int{403, 413, 422, 429}}
	}
	httpx.Handle(api, route(http.MethodGet), func(ctx context.Context, in *getInput) (*imageOutput, error) {
		return s.serve(ctx, in.Request, false)
	})
	httpx.Handle(api, route(http.MethodPost), func(ctx context.Context, in *postInput) (*imageOutput, error) {
		return s.serve(ctx, in.Body, true)
	})
}

func (s *Service) serve(ctx context.Context, in Request, post bool) (*imageOutput, error) {
	t := httpx.TenantFrom(ctx)
	if err := s.limit(ctx, t, post); err != nil {
		return nil, err
	}
	if err := s.Files.Verify(t, in.Key, in.Expires, in.Signature); err != nil {
		return nil, err
	}
	crop, err := ParseCrop(in.Crop)
	if err != nil {
		return nil, err
	}
	o := Options{Width: in.Width, Height: in.Height, Fit: in.Fit, Format: in.Format, Quality: in.Quality, Crop: crop}
	body, ctype, hit, err := s.Render(ctx, t, in.Key, o)
	if err != nil {
		return nil, err
	}
	cache := "miss"
	if hit {
		cache = "hit"
	}
	maxAge := max(in.Expires-s.Files.Clock.Now().Unix(), 0)
	return &imageOutput{ContentType: ctype, CacheControl: "private, max-age=" + strconv.FormatInt(maxAge, 10),
		Cache: cache, Body: body}, nil
}

// Render returns the rendering of the stored image at key, from the cache
// when it was made before (hit), else made and cached now.
func (s *Service) Render(ctx context.Context, t *platform.Tenant, key string, o Options) ([]byte, string, bool, error) {
	info, err := t.Blob.Stat(ctx, key)
	if errors.Is(err, blob.ErrNotFound) || errors.Is(err, blob.ErrInvalidKey) {
		return nil, "", false, apperr.New(apperr.NotFound, "File not found.")
	}
	if err != nil {
		return nil, "", false, fmt.Errorf("img: stat %s: %w", key, err)
	}
	if info.Size > MaxSourceBytes {
		return nil, "", false, apperr.New(apperr.TooLarge, fmt.Sprintf("The image file is larger than %d MiB.", MaxSourceBytes>>20))
	}
	// The cache key names the source as it is now (size and time), so a
	// replaced image is rendered afresh.
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\n%d\n%d\n%+v", key, info.Size, info.ModTime.UnixNano(), o))
	cacheKey := "img-cache/" + hex.EncodeToString(sum[:])
	if rc, ci, err := t.Blob.Get(ctx, cacheKey); err == nil {
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
		if err == nil {
			return b, ci.ContentType, true, nil
		}
	}
	rc, _, err := t.Blob.Get(ctx, key)
	if err != nil {
		return nil, "", false, fmt.Errorf("img: open %s: %w", key, err)
	}
	src, err := io.ReadAll(io.LimitReader(rc, MaxSourceBytes+1))
	rc.Close()
	if err != nil {
		return nil, "", false, fmt.Errorf("img: read %s: %w", key, err)
	}
	out, ctype, err := Render(src, o)
	if err != nil {
		return nil, "", false, err
	}
	// A failed cache write costs only a later rendering.
	_ = t.Blob.Put(ctx, cacheKey, bytes.NewReader(out), int64(len(out)), ctype)
	return out, ctype, false, nil
}

// limit applies the Limits row of /api/img: a fixed window of a minute for
// the tenant host overall and for each IP; GET only while the limiter
// setting is enabled.
func (s *Service) limit(ctx context.Context, t *platform.Tenant, post bool) error {
	if !post {
		status, err := s.Settings.String(ctx, t, "images.private.rate_limiter_status")
		if err != nil {
			return err
		}
		if status != settings.Enabled {
			return nil
		}
	}
	global, err := s.Settings.Int(ctx, t, "images.private.rate_limit_global")
	if err != nil {
		return err
	}
	perIP, err := s.Settings.Int(ctx, t, "images.private.rate_limit_per_ip")
	if err != nil {
		return err
	}
	host := t.PrimaryHost()
	for _, c := range []struct {
		key   string
		limit int
	}{{host + "|img|all", global}, {host + "|img|ip:" + httpx.ClientIP(ctx), perIP}} {
		d, err := s.Limiter.Allow(ctx, c.key, c.limit, time.Minute)
		if err != nil {
			return apperr.Wrap(apperr.Unavailable, err, "The rate limiter is unavailable.")
		}
		if !d.Allowed {
			e := apperr.New(apperr.RateLimited, "Too Many Attempts.")
			e.RetryAfter = max(int(math.Ceil(d.RetryAfter.Seconds())), 1)
			return e
		}
	}
	return nil
}
