package topics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/platform"
)

// submissionRules is implemented by the kinds learners submit work to
// (package content/project): which extensions and what size a submission
// may have.
type submissionRules interface {
	SubmissionRules(value json.RawMessage) (accept []string, maxSize int64, err error)
	// CheckSubmission refuses a file whose content does not match its type.
	CheckSubmission(f content.File, field string) error
}

func submissionsPrefix(topicID int64) string { return fmt.Sprintf("topics/%d/submissions/", topicID) }

// Learnable is a topic the caller may work on as a learner: they have
// access to the course, which is active, and the topic is active; editors
// of the course may always, to try the topic out.
func (s *Service) Learnable(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64) (Topic, error) {
	topic, err := ByID(ctx, t.DB, topicID)
	if err != nil {
		return Topic{}, err
	}
	course, err := courses.ByID(ctx, t.DB, topic.CourseID)
	if err != nil {
		return Topic{}, err
	}
	if courses.CanEdit(p, course) {
		return topic, nil
	}
	now := s.now()
	ok, err := courses.CanLearn(ctx, t, t.DB, now, p, course)
	if err != nil {
		return Topic{}, err
	}
	if !ok {
		return Topic{}, apperr.New(apperr.Forbidden, "You do not have access to this course.")
	}
	if !topic.Active {
		return Topic{}, errTopicMissing
	}
	if !course.Active(now) {
		return Topic{}, apperr.New(apperr.Forbidden, "This course is not active.")
	}
	return topic, nil
}

// Submit stores a learner's work for a project topic (form field file, or
// value) and then completes the topic through Progress. The caller must have access to
// the course, which must be active, and the topic must be active; editors
// of the course may always submit, to try the topic out.
func (s *Service) Submit(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, body rawBody) (SubmissionView, error) {
	topic, err := s.Learnable(ctx, t, p, topicID)
	if err != nil {
		return SubmissionView{}, err
	}
	now := s.now()
	kind, _ := s.Kinds.ByClass(topic.TopicableType)
	rules, ok := kind.(submissionRules)
	if !ok {
		return SubmissionView{}, apperr.New(apperr.Invalid, "This topic does not take project submissions.")
	}
	accept, maxSize, err := rules.SubmissionRules(topic.Content)
	if err != nil {
		return SubmissionView{}, err
	}
	f, err := readForm(ctx, body, formLimits{values: 64 << 10, fileCap: fixedCap(maxSize), scanner: s.Scanner})
	if err != nil {
		return SubmissionView{}, err
	}
	defer f.Close()
	file, field, ok := f.file("file", "value")
	if !ok {
		return SubmissionView{}, apperr.Field("file", "The file field is required.")
	}
	if !slices.Contains(accept, content.Ext(file.Name)) {
		list := make([]string, len(accept))
		for i, ext := range accept {
			list[i] = strings.TrimPrefix(ext, ".")
		}
		return SubmissionView{}, apperr.Field(field, fmt.Sprintf("The %s must be a file of type: %s.", field, strings.Join(list, ", ")))
	}
	if file.Size == 0 {
		return SubmissionView{}, apperr.Field(field, fmt.Sprintf("The %s is empty.", field))
	}
	if err := rules.CheckSubmission(file, field); err != nil {
		return SubmissionView{}, err
	}
	sub := Submission{TopicID: topicID, UserID: p.UserID, Name: displayName(file.Name), Size: file.Size,
		ContentType: attachmentType(file.Name), CreatedAt: now}
	sub.Path = content.NewPrefix(fmt.Sprintf("%s%d", submissionsPrefix(topicID), p.UserID)) + content.SafeName(file.Name)
	if err := putFile(ctx, t, sub.Path, file, sub.ContentType); err != nil {
		return SubmissionView{}, err
	}
	if sub.ID, err = insertSubmission(ctx, t.DB, sub); err != nil {
		s.deleteBlobs(ctx, t, []string{sub.Path})
		return SubmissionView{}, err
	}
	if s.Progress != nil {
		if err := s.Progress.CompleteTopic(ctx, t, p.UserID, topicID); err != nil {
			// The submission did not count, so it is not kept either.
			t.DB.ExecContext(context.WithoutCancel(ctx), `DELETE FROM project_submissions WHERE id = $1`, sub.ID)
			s.deleteBlobs(ctx, t, []string{sub.Path})
			return SubmissionView{}, err
		}
	}
	return submissionView(sub, false), nil
}

// Submissions lists a project topic's submissions, newest first, with
// their users, for those who may read the course in the admin API.
func (s *Service) Submissions(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, offset, limit int) ([]SubmissionView, int64, error) {
	if _, _, err := s.readable(ctx, t, p, topicID); err != nil {
		return nil, 0, err
	}
	list, total, err := listSubmissions(ctx, t.DB, topicID, offset, limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]SubmissionView, 0, len(list))
	for _, sub := range list {
		out = append(out, submissionView(sub, true))
	}
	return out, total, nil
}

// SubmissionFile opens a submission's file for download; the caller
// closes it.
func (s *Service) SubmissionFile(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID, id int64) (io.ReadCloser, blob.Info, error) {
	if _, _, err := s.readable(ctx, t, p, topicID); err != nil {
		return nil, blob.Info{}, err
	}
	sub, err := submissionByID(ctx, t.DB, topicID, id)
	if err != nil {
		return nil, blob.Info{}, err
	}
	rc, info, err := t.Blob.Get(ctx, sub.Path)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, info, apperr.New(apperr.NotFound, "File not found.")
	}
	if err != nil {
		return nil, info, fmt.Errorf("topics: open submission %d: %w", id, err)
	}
	// Downloads are named as the learner named the file.
	info.Key = content.SafeName(sub.Name)
	return rc, info, nil
}
