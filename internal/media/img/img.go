// Package img is the image renderer: it resizes, crops and converts
// images of a tenant's store to PNG, JPEG or WebP, refusing files that are
// not images and images whose size would exhaust memory when decoded
// (decompression bombs) before decoding them.
package img

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // decoders the renderer reads
	"image/jpeg"
	"image/png"
	"strconv"
	"strings"

	"github.com/gen2brain/webp"
	"golang.org/x/image/draw"

	"github.com/lms-platform/lms/internal/apperr"
)

// Limits of the renderer.
const (
	// MaxSourceBytes is the largest stored file it reads.
	MaxSourceBytes = 32 << 20
	// MaxSourcePixels bounds a source's decoded size (4 bytes a pixel:
	// 160 MB), checked from its header before decoding.
	MaxSourcePixels = 40_000_000
	// MaxSide and MaxPixels bound the output.
	MaxSide   = 4096
	MaxPixels = 16_000_000
)

// Fits say how the image fills a box of width × height.
const (
	FitContain = "contain" // inside the box, proportions kept (default)
	FitCover   = "cover"   // covers the box, proportions kept, the overflow cropped at the centre
	FitFill    = "fill"    // exactly the box, proportions not kept
)

// Options are one rendering. Zero Width and Height keep the source's
// size; one of them alone keeps the proportions.
type Options struct {
	Width, Height int
	Fit           string
	// Format is png, jpeg or webp; empty: jpeg for a JPEG source, png for
	// the others.
	Format  string
	Quality int // 1 to 100, for jpeg and webp; 0 means 80
	// Crop, when not empty, is cut from the source first (x,y,w,h).
	Crop image.Rectangle
}

// ParseCrop reads "x,y,w,h".
func ParseCrop(s string) (image.Rectangle, error) {
	if s == "" {
		return image.Rectangle{}, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return image.Rectangle{}, apperr.Field("crop", "crop is x,y,width,height in pixels.")
	}
	var n [4]int
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 0 || v > 1<<20 {
			return image.Rectangle{}, apperr.Field("crop", "crop is x,y,width,height in pixels.")
		}
		n[i] = v
	}
	if n[2] == 0 || n[3] == 0 {
		return image.Rectangle{}, apperr.Field("crop", "The crop's width and height must be positive.")
	}
	return image.Rect(n[0], n[1], n[0]+n[2], n[1]+n[3]), nil
}

// Check validates o and fills its defaults; the source's format decides
// an empty Format.
func (o *Options) check(source string) error {
	if o.Width < 0 || o.Height < 0 || o.Width > MaxSide || o.Height > MaxSide {
		return apperr.Field("width", fmt.Sprintf("Width and height are from 1 to %d pixels.", MaxSide))
	}
	switch o.Fit {
	case "":
		o.Fit = FitContain
	case FitContain, FitCover, FitFill:
	default:
		return apperr.Field("fit", "fit is contain, cover or fill.")
	}
	switch o.Format {
	case "":
		o.Format = "png"
		if source == "jpeg" {
			o.Format = "jpeg"
		}
	case "png", "jpeg", "webp":
	default:
		return apperr.Field("format", "format is webp, jpeg or png.")
	}
	if o.Quality < 0 || o.Quality > 100 {
		return apperr.Field("quality", "quality is from 1 to 100.")
	}
	if o.Quality == 0 {
		o.Quality = 80
	}
	return nil
}

// ContentType is the media type of a format.
func ContentType(format string) string { return "image/" + format }

// Render reads src and renders it by o. It answers Invalid for a file that
// is not a PNG, JPEG, GIF or WebP image and for options it cannot meet,
// TooLarge for a source or an output over the limits.
func Render(src []byte, o Options) ([]byte, string, error) {
	if len(src) > MaxSourceBytes {
		return nil, "", apperr.New(apperr.TooLarge, fmt.Sprintf("The image file is larger than %d MiB.", MaxSourceBytes>>20))
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(src))
	if err != nil {
		return nil, "", apperr.New(apperr.Invalid, "The file is not an image the renderer reads (PNG, JPEG, GIF or WebP).")
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > MaxSourcePixels {
		return nil, "", apperr.New(apperr.TooLarge, fmt.Sprintf(
			"The image is %d × %d pixels; the renderer reads images of at most %d million pixels.",
			cfg.Width, cfg.Height, MaxSourcePixels/1_000_000))
	}
	if err := o.check(format); err != nil {
		return nil, "", err
	}
	m, _, err := image.Decode(bytes.NewReader(src))
	if err != nil {
		return nil, "", apperr.New(apperr.Invalid, "The image is damaged and cannot be decoded.")
	}
	if !o.Crop.Empty() {
		if !o.Crop.In(m.Bounds().Sub(m.Bounds().Min)) {
			return nil, "", apperr.Field("crop", fmt.Sprintf("The crop lies outside the image (%d × %d).", cfg.Width, cfg.Height))
		}
		m = cropped(m, o.Crop.Add(m.Bounds().Min))
	}
	out, err := resize(m, o)
	if err != nil {
		return nil, "", err
	}
	var b bytes.Buffer
	switch o.Format {
	case "png":
		err = png.Encode(&b, out)
	case "jpeg":
		err = jpeg.Encode(&b, flatten(out), &jpeg.Options{Quality: o.Quality})
	case "webp":
		err = webp.Encode(&b, out, webp.Options{Quality: o.Quality, Method: 4})
	}
	if err != nil {
		return nil, "", fmt.Errorf("img: encode %s: %w", o.Format, err)
	}
	return b.Bytes(), ContentType(o.Format), nil
}

func cropped(m image.Image, r image.Rectangle) image.Image {
	dst := image.NewNRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Copy(dst, image.Point{}, m, r, draw.Src, nil)
	return dst
}

// resize scales m into the box of o, by its fit.
func resize(m image.Image, o Options) (image.Image, error) {
	sw, sh := m.Bounds().Dx(), m.Bounds().Dy()
	w, h := o.Width, o.Height
	switch {
	case w == 0 && h == 0:
		w, h = sw, sh
	case w == 0:
		w = max(1, sw*h/sh)
	case h == 0:
		h = max(1, sh*w/sw)
	}
	src := m.Bounds()
	switch o.Fit {
	case FitContain:
		if sw*h > sh*w { // wider than the box
			h = max(1, sh*w/sw)
		} else {
			w = max(1, sw*h/sh)
		}
	case FitCover:
		// Cut the source to the box's proportions, centred.
		if sw*h > sh*w {
			cw := sh * w / h
			src = image.Rect(src.Min.X+(sw-cw)/2, src.Min.Y, src.Min.X+(sw-cw)/2+cw, src.Max.Y)
		} else {
			ch := sw * h / w
			src = image.Rect(src.Min.X, src.Min.Y+(sh-ch)/2, src.Max.X, src.Min.Y+(sh-ch)/2+ch)
		}
	}
	if w > MaxSide || h > MaxSide || w*h > MaxPixels {
		return nil, apperr.New(apperr.TooLarge, fmt.Sprintf("The output would be %d × %d pixels; the limit is %d per side and %d million in all.",
			w, h, MaxSide, MaxPixels/1_000_000))
	}
	if w == src.Dx() && h == src.Dy() && src == m.Bounds() {
		return m, nil
	}
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), m, src, draw.Src, nil)
	return dst, nil
}

// flatten puts an image with transparency on white, as JPEG has no alpha.
func flatten(m image.Image) image.Image {
	dst := image.NewRGBA(m.Bounds())
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(dst, dst.Bounds(), m, m.Bounds().Min, draw.Over)
	return dst
}
