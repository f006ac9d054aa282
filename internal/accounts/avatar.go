package accounts

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/files"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/scan"
	"github.com/lms-platform/lms/internal/sqldb"
)

// MaxAvatarSize is the largest avatar image accepted, in bytes.
const MaxAvatarSize = 2 << 20

var errAvatarTooLarge = apperr.New(apperr.TooLarge, "The avatar may not be greater than 2 MiB.")

func avatarPrefix(userID int64) string { return "avatars/" + strconv.FormatInt(userID, 10) + "/" }

// SetAvatar stores image as the user's avatar and deletes the one it
// replaces. The type comes from the content, never from the client's
// claim: only PNG, JPEG, GIF and WebP images of at most 2 MiB are taken.
func (s *Service) SetAvatar(ctx context.Context, t *platform.Tenant, p *access.Principal, userID int64, image []byte) (Detail, error) {
	if err := allow(canUpdateUser(p, userID)); err != nil {
		return Detail{}, err
	}
	if _, err := ByID(ctx, t.DB, userID); err != nil {
		return Detail{}, err
	}
	img, err := files.CheckImage(image, MaxAvatarSize, errAvatarTooLarge, "avatar")
	if err != nil {
		return Detail{}, err
	}
	if err := scan.Check(ctx, s.Scanner, bytes.NewReader(image), "avatar"); err != nil {
		return Detail{}, err
	}
	key, err := files.StoreImage(ctx, t, avatarPrefix(userID), img)
	if err != nil {
		return Detail{}, fmt.Errorf("accounts: avatar: %w", err)
	}
	old, err := s.swapAvatar(ctx, t, userID, &key)
	if err != nil {
		// The new file has no row pointing at it; a failed delete only
		// leaves an orphan file, which is not worth the request.
		_ = t.Blob.Delete(context.WithoutCancel(ctx), key)
		return Detail{}, err
	}
	s.dropAvatar(ctx, t, old)
	return s.detail(ctx, t, userID)
}

// RemoveAvatar clears the user's avatar and deletes its file.
func (s *Service) RemoveAvatar(ctx context.Context, t *platform.Tenant, p *access.Principal, userID int64) (Detail, error) {
	if err := allow(canUpdateUser(p, userID)); err != nil {
		return Detail{}, err
	}
	old, err := s.swapAvatar(ctx, t, userID, nil)
	if err != nil {
		return Detail{}, err
	}
	s.dropAvatar(ctx, t, old)
	return s.detail(ctx, t, userID)
}

// swapAvatar points the user at key (nil: none) and returns the path it
// pointed at before.
func (s *Service) swapAvatar(ctx context.Context, t *platform.Tenant, userID int64, key *string) (*string, error) {
	var old *string
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		u, err := ByID(ctx, tx, userID)
		if err != nil {
			return err
		}
		old = u.AvatarPath
		return updateUser(ctx, tx, s.now(), userID, []column{{"avatar_path", key}})
	})
	return old, err
}

// dropAvatar deletes a replaced avatar file. The row no longer names it,
// so a failure only leaves an orphan file behind; it is not the caller's
// error.
func (s *Service) dropAvatar(ctx context.Context, t *platform.Tenant, key *string) {
	if key != nil && *key != "" {
		_ = t.Blob.Delete(context.WithoutCancel(ctx), *key)
	}
}

// dropAvatars deletes every avatar file of a deleted user.
func (s *Service) dropAvatars(ctx context.Context, t *platform.Tenant, userID int64) {
	_ = t.Blob.DeletePrefix(context.WithoutCancel(ctx), avatarPrefix(userID))
}
