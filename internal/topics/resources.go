package topics

import (
	"context"
	"fmt"
	"io"
	"mime"
	"strings"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/platform"
)

// MaxResourceSize caps an attachment.
const MaxResourceSize = 100 << 20

// Resources lists a topic's attachments.
func (s *Service) Resources(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64) ([]ResourceView, error) {
	if _, _, err := s.readable(ctx, t, p, topicID); err != nil {
		return nil, err
	}
	list, err := resourcesOf(ctx, t.DB, topicID)
	if err != nil {
		return nil, err
	}
	out := make([]ResourceView, 0, len(list))
	for _, r := range list {
		out = append(out, s.resourceView(t, r))
	}
	return out, nil
}

// AddResource attaches the file of the form field resource (or file) to a
// topic; a field name may name it otherwise than its file name.
func (s *Service) AddResource(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, body rawBody) (ResourceView, error) {
	if _, _, err := s.editable(ctx, t, p, topicID); err != nil {
		return ResourceView{}, err
	}
	f, err := readForm(ctx, body, formLimits{values: 64 << 10, fileCap: fixedCap(MaxResourceSize), scanner: s.Scanner})
	if err != nil {
		return ResourceView{}, err
	}
	defer f.Close()
	file, _, ok := f.file("resource", "file")
	if !ok {
		return ResourceView{}, apperr.Field("resource", "The resource field is required.")
	}
	r := newFieldReader(f)
	name := r.text(255, "name")
	if err := r.err(); err != nil {
		return ResourceView{}, err
	}
	res := Resource{TopicID: topicID, Name: displayName(file.Name), Size: file.Size,
		ContentType: attachmentType(file.Name), CreatedAt: s.now()}
	if name != nil && strings.TrimSpace(*name) != "" {
		res.Name = strings.TrimSpace(*name)
	}
	res.Path = content.NewPrefix("resources") + content.SafeName(file.Name)
	if err := putFile(ctx, t, res.Path, file, res.ContentType); err != nil {
		return ResourceView{}, err
	}
	res.ID, err = insertResource(ctx, t.DB, res)
	if err != nil {
		s.deleteBlobs(ctx, t, []string{res.Path})
		return ResourceView{}, err
	}
	return s.resourceView(t, res), nil
}

// displayName is a client's file name fit to show: its base name, at most
// 255 bytes.
func displayName(name string) string {
	name = strings.TrimSpace(name[strings.LastIndexAny(name, `/\`)+1:])
	if name == "" {
		return "file"
	}
	if len(name) > 255 {
		return content.SafeName(name)
	}
	return name
}

// attachmentType is the content type an attachment is served with, from
// its extension. The files route serves anything that is not an image,
// audio, video or PDF as a download, without sniffing, so a wrong claim
// cannot make the browser run it.
func attachmentType(name string) string {
	ct := mime.TypeByExtension(content.Ext(name))
	if ct == "" {
		return "application/octet-stream"
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return "application/octet-stream"
	}
	return mt
}

func putFile(ctx context.Context, t *platform.Tenant, key string, f content.File, contentType string) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("topics: open upload: %w", err)
	}
	defer rc.Close()
	if err := t.Blob.Put(ctx, key, io.LimitReader(rc, f.Size), f.Size, contentType); err != nil {
		return fmt.Errorf("topics: store %s: %w", key, err)
	}
	return nil
}

// RenameResource changes the name an attachment is shown with.
func (s *Service) RenameResource(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID, id int64, name string) (ResourceView, error) {
	if _, _, err := s.editable(ctx, t, p, topicID); err != nil {
		return ResourceView{}, err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return ResourceView{}, apperr.Field("name", "The name field is required.")
	}
	res, err := resourceByID(ctx, t.DB, topicID, id)
	if err != nil {
		return ResourceView{}, err
	}
	if _, err := t.DB.ExecContext(ctx, `UPDATE topic_resources SET name = $1 WHERE id = $2`, name, id); err != nil {
		return ResourceView{}, fmt.Errorf("topics: rename resource %d: %w", id, err)
	}
	res.Name = name
	return s.resourceView(t, res), nil
}

// DeleteResource removes an attachment and its file. Deleting one that
// is not there (or of a topic that is not there) succeeds.
func (s *Service) DeleteResource(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID, id int64) error {
	_, _, err := s.editable(ctx, t, p, topicID)
	if apperr.Is(err, apperr.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	res, err := resourceByID(ctx, t.DB, topicID, id)
	if apperr.Is(err, apperr.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := t.DB.ExecContext(ctx, `DELETE FROM topic_resources WHERE id = $1`, id); err != nil {
		return fmt.Errorf("topics: delete resource %d: %w", id, err)
	}
	s.deleteBlobs(ctx, t, []string{res.Path})
	return nil
}
