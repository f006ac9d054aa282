package courses

import (
	"context"
	"strconv"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
)

// MaxImageSize is the largest course image accepted, in bytes.
const MaxImageSize = 5 << 20

// ErrImageTooLarge answers an image over MaxImageSize.
var ErrImageTooLarge = apperr.New(apperr.TooLarge, "The image may not be greater than 5 MiB.")

func imagePrefix(courseID int64) string { return "courses/" + strconv.FormatInt(courseID, 10) + "/" }

// dropFile deletes a file no row points at any more; a failure only leaves
// an orphan file, which is not the caller's error.
func dropFile(ctx context.Context, t *platform.Tenant, key *string) {
	if key != nil && *key != "" {
		_ = t.Blob.Delete(context.WithoutCancel(ctx), *key)
	}
}
