package topics

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/platform"
)

// View is a topic as the admin API shows it.
type View struct {
	ID            int64  `json:"id"`
	LessonID      int64  `json:"lesson_id"`
	CourseID      int64  `json:"course_id"`
	Title         string `json:"title"`
	Summary       string `json:"summary"`
	Order         int    `json:"order"`
	Preview       bool   `json:"preview"`
	Active        bool   `json:"active"`
	CanSkip       bool   `json:"can_skip"`
	Duration      string `json:"duration"`
	TopicableType string `json:"topicable_type" doc:"Content class, one of GET /api/admin/topics/types."`
	Kind          string `json:"kind" doc:"richtext, video, audio, image, pdf, oembed, h5p, scorm, liascript, lti, cmi5, quiz, project or unknown."`
	Topicable     any    `json:"topicable" doc:"The content as its kind shows it; links to files are signed and expire."`
	// Resources are listed by GET of one topic and the edit form only.
	Resources []ResourceView `json:"resources,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

// ResourceView is an attachment of a topic.
type ResourceView struct {
	ID          int64     `json:"id"`
	TopicID     int64     `json:"topic_id"`
	Name        string    `json:"name"`
	Size        int64     `json:"size"`
	ContentType string    `json:"content_type"`
	URL         string    `json:"url" doc:"Signed link to the file; it expires."`
	CreatedAt   time.Time `json:"created_at"`
}

// TypeView is one registered content class.
type TypeView struct {
	Class      string   `json:"class"`
	Kind       string   `json:"kind"`
	Extensions []string `json:"extensions,omitempty" doc:"File extensions the kind accepts, for kinds taking a file."`
	MaxUpload  int64    `json:"max_upload,omitempty" doc:"Largest file the kind accepts, in bytes."`
}

// FormView is the form data of a create or an edit.
type FormView struct {
	Types    []TypeView   `json:"types"`
	Defaults formDefaults `json:"defaults"`
	Topic    *View        `json:"topic,omitempty"`
}

type formDefaults struct {
	Active  bool `json:"active"`
	Preview bool `json:"preview"`
	CanSkip bool `json:"can_skip"`
}

// SubmissionView is a learner's project submission.
type SubmissionView struct {
	ID          int64          `json:"id"`
	TopicID     int64          `json:"topic_id"`
	UserID      int64          `json:"user_id"`
	Name        string         `json:"name"`
	Size        int64          `json:"size"`
	ContentType string         `json:"content_type"`
	CreatedAt   time.Time      `json:"created_at"`
	User        *submitterView `json:"user,omitempty"`
}

type submitterView struct {
	ID        int64  `json:"id"`
	Email     string `json:"email"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

// view shows a topic; off holds the classes of the kinds the tenant has
// switched off (content.Registry.Off).
func (s *Service) view(t *platform.Tenant, topic Topic, resources []Resource, off map[string]bool) (View, error) {
	v := View{ID: topic.ID, LessonID: topic.LessonID, CourseID: topic.CourseID, Title: topic.Title, Summary: topic.Summary,
		Order: topic.Position, Preview: topic.Preview, Active: topic.Active, CanSkip: topic.CanSkip, Duration: topic.Duration,
		TopicableType: topic.TopicableType, Kind: s.Kinds.KindName(topic.TopicableType), CreatedAt: topic.CreatedAt,
		UpdatedAt: topic.UpdatedAt}
	if k, ok := s.Kinds.ByClass(topic.TopicableType); ok {
		env := s.env(t, topic.ID)
		env.Off = off[topic.TopicableType]
		shown, err := k.View(env, topic.Content)
		if err != nil {
			return v, fmt.Errorf("topics: view topic %d: %w", topic.ID, err)
		}
		v.Topicable = shown
	} else {
		// A class no kind is registered for is shown as stored.
		v.Topicable = json.RawMessage(topic.Content)
	}
	for _, r := range resources {
		v.Resources = append(v.Resources, s.resourceView(t, r))
	}
	return v, nil
}

func (s *Service) viewByID(ctx context.Context, t *platform.Tenant, id int64, withResources bool) (View, error) {
	topic, err := ByID(ctx, t.DB, id)
	if err != nil {
		return View{}, err
	}
	var resources []Resource
	if withResources {
		if resources, err = resourcesOf(ctx, t.DB, id); err != nil {
			return View{}, err
		}
	}
	off, err := s.Kinds.Off(ctx, t)
	if err != nil {
		return View{}, err
	}
	return s.view(t, topic, resources, off)
}

func (s *Service) resourceView(t *platform.Tenant, r Resource) ResourceView {
	return ResourceView{ID: r.ID, TopicID: r.TopicID, Name: r.Name, Size: r.Size, ContentType: r.ContentType,
		URL: s.Files.URL(t, r.Path), CreatedAt: r.CreatedAt}
}

func submissionView(sub Submission, withUser bool) SubmissionView {
	v := SubmissionView{ID: sub.ID, TopicID: sub.TopicID, UserID: sub.UserID, Name: sub.Name, Size: sub.Size,
		ContentType: sub.ContentType, CreatedAt: sub.CreatedAt}
	if withUser {
		v.User = &submitterView{ID: sub.UserID, Email: sub.Email, FirstName: sub.FirstName, LastName: sub.LastName}
	}
	return v
}
