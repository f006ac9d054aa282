package files

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
)

// imageTypes are the types an uploaded picture (course image, avatar) may
// have, by the content type http.DetectContentType sniffs, with the file
// extension stored.
var imageTypes = map[string]string{
	"image/png":  "png",
	"image/jpeg": "jpg",
	"image/gif":  "gif",
	"image/webp": "webp",
}

// Image is an uploaded picture whose type was read from its content.
type Image struct {
	Data        []byte
	ContentType string
	Ext         string
}

// CheckImage takes the type from the content, never from the client's
// claim: only PNG, JPEG, GIF and WebP images of at most max bytes. Over
// max it answers tooLarge; another type is a 422 on field.
func CheckImage(data []byte, max int, tooLarge error, field string) (Image, error) {
	if len(data) > max {
		return Image{}, tooLarge
	}
	ctype := http.DetectContentType(data)
	ext, ok := imageTypes[ctype]
	if !ok || len(data) == 0 {
		return Image{}, apperr.Field(field, fmt.Sprintf("The %s must be a PNG, JPEG, GIF or WebP image.", field))
	}
	return Image{Data: data, ContentType: ctype, Ext: ext}, nil
}

// StoreImage writes img under a fresh random name below prefix and
// returns its key: a new picture never overwrites one a signed link may
// still point at.
func StoreImage(ctx context.Context, t *platform.Tenant, prefix string, img Image) (string, error) {
	name := make([]byte, 16)
	rand.Read(name)
	key := prefix + hex.EncodeToString(name) + "." + img.Ext
	if err := t.Blob.Put(ctx, key, bytes.NewReader(img.Data), int64(len(img.Data)), img.ContentType); err != nil {
		return "", fmt.Errorf("store image: %w", err)
	}
	return key, nil
}
