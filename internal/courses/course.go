// Package courses holds courses and lessons: authoring, access of users
// and groups, tutors, and the public catalogue. Topics and their content
// live in package topics; programs and progress in package learning.
package courses

import (
	"slices"
	"time"
)

// Status is the publication state of a course.
type Status string

const (
	Draft                Status = "draft"
	Published            Status = "published"
	Archived             Status = "archived"
	PublishedUnactivated Status = "published_unactivated"
)

// Statuses lists the valid statuses.
var Statuses = []Status{Draft, Published, Archived, PublishedUnactivated}

// Valid reports whether s is a known status.
func (s Status) Valid() bool { return slices.Contains(Statuses, s) }

// Listed reports whether a course of this status appears in the public
// catalogue (when findable) and opens to learners.
func (s Status) Listed() bool { return s == Published || s == PublishedUnactivated }

// Levels lists the levels a course may name; an empty level is none.
var Levels = []string{"beginner", "intermediate", "advanced", "expert"}

// Limits of the text fields of courses and lessons.
const (
	maxTitleLength       = 255
	maxSummaryLength     = 5000
	maxDescriptionLength = 100000
	maxLanguageLength    = 16
	maxTagLength         = 64
	maxTags              = 100
	maxDurationLength    = 64
)

// Course is a course with its relations.
type Course struct {
	ID              int64
	Title           string
	Summary         string
	Description     string
	ImagePath       *string
	Language        string
	Level           string
	Status          Status
	ActiveFrom      *time.Time
	ActiveTo        *time.Time
	HoursToComplete *int
	Public          bool
	Findable        bool
	Position        int
	Authors         []int64
	Categories      []int64
	Tags            []string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// HasAuthor reports whether the user authors the course.
func (c Course) HasAuthor(userID int64) bool { return slices.Contains(c.Authors, userID) }

// Started reports whether the course's window has opened at now.
func (c Course) Started(now time.Time) bool { return c.ActiveFrom == nil || !now.Before(*c.ActiveFrom) }

// Ended reports whether the course's window has closed at now.
func (c Course) Ended(now time.Time) bool { return c.ActiveTo != nil && !now.Before(*c.ActiveTo) }

// Active reports whether learners can take the course at now: published
// and inside its window.
func (c Course) Active(now time.Time) bool {
	return c.Status == Published && c.Started(now) && !c.Ended(now)
}

// Lesson is a part of a course; lessons nest through ParentID.
type Lesson struct {
	ID         int64
	CourseID   int64
	ParentID   *int64
	Title      string
	Summary    string
	Duration   string
	Position   int
	Active     bool
	ActiveFrom *time.Time
	ActiveTo   *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Open reports whether the lesson's window includes now. An inactive
// lesson is hidden; an active lesson outside its window shows its topics
// without content.
func (l Lesson) Open(now time.Time) bool {
	return (l.ActiveFrom == nil || !now.Before(*l.ActiveFrom)) && (l.ActiveTo == nil || now.Before(*l.ActiveTo))
}
