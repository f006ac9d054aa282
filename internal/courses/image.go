package courses

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
)

// MaxImageSize is the largest course image accepted, in bytes.
const MaxImageSize = 5 << 20

// imageTypes are the types a course image may have, by the content type
// http.DetectContentType sniffs, with the file extension stored.
var imageTypes = map[string]string{
	"image/png":  "png",
	"image/jpeg": "jpg",
	"image/gif":  "gif",
	"image/webp": "webp",
}

// ErrImageTooLarge answers an image over MaxImageSize.
var ErrImageTooLarge = apperr.New(apperr.TooLarge, "The image may not be greater than 5 MiB.")

type upload struct {
	data        []byte
	contentType string
	ext         string
}

// checkImage takes the type from the content, never from the client's
// claim: only PNG, JPEG, GIF and WebP images are accepted.
func checkImage(data []byte) (upload, error) {
	if len(data) > MaxImageSize {
		return upload{}, ErrImageTooLarge
	}
	ctype := http.DetectContentType(data)
	ext, ok := imageTypes[ctype]
	if !ok || len(data) == 0 {
		return upload{}, apperr.Field("image", "The image must be a PNG, JPEG, GIF or WebP image.")
	}
	return upload{data: data, contentType: ctype, ext: ext}, nil
}

func imagePrefix(courseID int64) string { return "courses/" + strconv.FormatInt(courseID, 10) + "/" }

// storeImage writes the image under a fresh name in the course's folder
// and returns its key.
func storeImage(ctx context.Context, t *platform.Tenant, courseID int64, img upload) (string, error) {
	name := make([]byte, 16)
	rand.Read(name)
	key := imagePrefix(courseID) + hex.EncodeToString(name) + "." + img.ext
	if err := t.Blob.Put(ctx, key, bytes.NewReader(img.data), int64(len(img.data)), img.contentType); err != nil {
		return "", fmt.Errorf("courses: store image: %w", err)
	}
	return key, nil
}

// dropFile deletes a file no row points at any more; a failure only leaves
// an orphan file, which is not the caller's error.
func dropFile(ctx context.Context, t *platform.Tenant, key *string) {
	if key != nil && *key != "" {
		_ = t.Blob.Delete(context.WithoutCancel(ctx), *key)
	}
}
