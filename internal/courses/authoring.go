package courses

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/files"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/scan"
	"github.com/lms-platform/lms/internal/sqldb"
)

// The admin course operations: list, forms, create, read, update, delete,
// sort and search.

var errCourseNotFound = apperr.New(apperr.NotFound, "Course not found.")

// CourseChange is a create or an update of a course. Nil fields (and
// unset optionals) keep what the course has: on create, the defaults.
type CourseChange struct {
	Title           *string
	Summary         *string
	Description     *string
	Language        *string
	Level           *string
	Status          *string
	ActiveFrom      Optional[time.Time]
	ActiveTo        Optional[time.Time]
	HoursToComplete Optional[int]
	Public          *bool
	Findable        *bool
	// Categories, Tags and Authors replace the course's when not nil.
	Categories []int64
	Tags       []string
	Authors    []int64
	// Image is a new image file; nil keeps the current one.
	Image []byte
}

// apply writes the change into c and notes every broken rule in p.
func (in CourseChange) apply(c *Course, p problems) {
	if in.Title != nil {
		c.Title = strings.TrimSpace(*in.Title)
	}
	switch {
	case c.Title == "":
		p.add("title", "The title field is required.")
	case utf8.RuneCountInString(c.Title) > maxTitleLength:
		p.add("title", fmt.Sprintf("The title may not be greater than %d characters.", maxTitleLength))
	}
	text(p, "summary", in.Summary, &c.Summary, maxSummaryLength)
	text(p, "description", in.Description, &c.Description, maxDescriptionLength)
	text(p, "language", in.Language, &c.Language, maxLanguageLength)
	if in.Level != nil {
		level := strings.TrimSpace(*in.Level)
		if level != "" && !slices.Contains(Levels, level) {
			p.add("level", "The selected level is invalid; levels are "+strings.Join(Levels, ", ")+".")
		}
		c.Level = level
	}
	if in.Status != nil {
		st := Status(*in.Status)
		if !st.Valid() {
			p.add("status", "The selected status is invalid; statuses are draft, published, archived, published_unactivated.")
		}
		c.Status = st
	}
	c.ActiveFrom = utc(in.ActiveFrom.or(c.ActiveFrom))
	c.ActiveTo = utc(in.ActiveTo.or(c.ActiveTo))
	window(p, c.ActiveFrom, c.ActiveTo)
	c.HoursToComplete = in.HoursToComplete.or(c.HoursToComplete)
	if c.HoursToComplete != nil && *c.HoursToComplete < 1 {
		p.add("hours_to_complete", "The hours to complete must be at least 1.")
	}
	if in.Public != nil {
		c.Public = *in.Public
	}
	if in.Findable != nil {
		c.Findable = *in.Findable
	}
	if in.Tags != nil {
		c.Tags = cleanTags(p, in.Tags)
	}
}

// text sets *dst to the trimmed value when given, noting one too long.
func text(p problems, field string, v *string, dst *string, max int) {
	if v == nil {
		return
	}
	*dst = strings.TrimSpace(*v)
	if utf8.RuneCountInString(*dst) > max {
		p.add(field, fmt.Sprintf("The %s may not be greater than %d characters.", strings.ReplaceAll(field, "_", " "), max))
	}
}

// window notes an active_to that is not after active_from.
func window(p problems, from, to *time.Time) {
	if from != nil && to != nil && !to.After(*from) {
		p.add("active_to", "The active to must be a date after active from.")
	}
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC()
	return &v
}

// cleanTags trims, checks and de-duplicates tags.
func cleanTags(p problems, tags []string) []string {
	if len(tags) > maxTags {
		p.add("tags", fmt.Sprintf("A course may have at most %d tags.", maxTags))
	}
	out := []string{}
	for i, tag := range tags {
		tag = strings.TrimSpace(tag)
		field := "tags." + strconv.Itoa(i)
		switch {
		case tag == "":
			p.add(field, "A tag may not be empty.")
		case utf8.RuneCountInString(tag) > maxTagLength:
			p.add(field, fmt.Sprintf("A tag may not be greater than %d characters.", maxTagLength))
		case !slices.Contains(out, tag):
			out = append(out, tag)
		}
	}
	return out
}

// checkRefs notes every category that does not exist and every author who
// is not a tutor or an admin.
func checkRefs(ctx context.Context, q sqldb.Querier, p problems, categories, authors []int64) error {
	if ids := sqldb.UniqueIDs(categories); len(ids) > 0 {
		found, err := accounts.CategoryNames(ctx, q, ids)
		if err != nil {
			return err
		}
		for i, id := range categories {
			if _, ok := found[id]; !ok {
				p.add("categories."+strconv.Itoa(i), fmt.Sprintf("The category %d does not exist.", id))
			}
		}
	}
	if ids := sqldb.UniqueIDs(authors); len(ids) > 0 {
		found, err := authorCapable(ctx, q, ids)
		if err != nil {
			return err
		}
		for i, id := range authors {
			if !found[id] {
				p.add("authors."+strconv.Itoa(i), fmt.Sprintf("The user %d is not a tutor or an admin.", id))
			}
		}
	}
	return nil
}

// authorCapable returns which of the users have the role tutor or admin.
func authorCapable(ctx context.Context, q sqldb.Querier, ids []int64) (map[int64]bool, error) {
	users, _, err := accounts.FindRefs(ctx, q, accounts.RefFilter{IDs: ids, Roles: []string{access.Tutor, access.Admin}})
	if err != nil {
		return nil, err
	}
	found := map[int64]bool{}
	for _, u := range users {
		found[u.ID] = true
	}
	return found, nil
}

func coursePayload(c Course) map[string]any {
	return map[string]any{"course_id": c.ID, "title": c.Title}
}

// statusEvents records CourseStatusChanged when the status moved and
// CoursedPublished when the course became active. before is nil for a new
// course.
func statusEvents(ctx context.Context, tx *sqldb.Tx, now time.Time, actor int64, before *Course, after Course) error {
	var from any
	wasActive := false
	if before != nil {
		from = before.Status
		wasActive = before.Active(now)
	}
	if (before == nil && after.Status != Draft) || (before != nil && before.Status != after.Status) {
		payload := coursePayload(after)
		payload["from"], payload["to"] = from, after.Status
		if err := events.Emit(ctx, tx, now, events.Event{Name: events.CourseStatusChanged, UserID: actor, Payload: payload}); err != nil {
			return err
		}
	}
	if !wasActive && after.Active(now) {
		return events.Emit(ctx, tx, now, events.Event{Name: events.CoursedPublished, UserID: actor, Payload: coursePayload(after)})
	}
	return nil
}

// CreateCourse adds a course. The creator becomes an author unless an
// admin names the authors.
func (s *Service) CreateCourse(ctx context.Context, t *platform.Tenant, p *access.Principal, in CourseChange) (CourseView, error) {
	if err := allow(CanCreate(p)); err != nil {
		return CourseView{}, err
	}
	now := s.now()
	c := Course{Status: Draft, Findable: true, Tags: []string{}}
	pr := problems{}
	in.apply(&c, pr)
	authors := in.Authors
	if authors == nil || !isAdmin(p) {
		authors = append(slices.Clone(authors), p.UserID)
	}
	var view CourseView
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		if err := checkRefs(ctx, tx, pr, in.Categories, in.Authors); err != nil {
			return err
		}
		if err := pr.err(); err != nil {
			return err
		}
		id, err := insertCourse(ctx, tx, now, c)
		if err != nil {
			return err
		}
		c.ID = id
		if err := setRelations(ctx, tx, c.ID, in.Categories, c.Tags); err != nil {
			return err
		}
		if err := s.setAuthors(ctx, tx, now, c, nil, sqldb.UniqueIDs(authors), p.UserID); err != nil {
			return err
		}
		if err := statusEvents(ctx, tx, now, p.UserID, nil, c); err != nil {
			return err
		}
		view, err = s.load(ctx, t, tx, c.ID)
		return err
	})
	return view, err
}

// load renders the course with the id.
func (s *Service) load(ctx context.Context, t *platform.Tenant, q sqldb.Querier, id int64) (CourseView, error) {
	c, err := ByID(ctx, q, id)
	if err != nil {
		return CourseView{}, err
	}
	return s.view(ctx, t, q, c)
}

// Course returns a course for the admin API.
func (s *Service) Course(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (CourseView, error) {
	c, err := ByID(ctx, t.DB, id)
	if err != nil {
		return CourseView{}, err
	}
	if err := allow(CanRead(p, c)); err != nil {
		return CourseView{}, err
	}
	return s.view(ctx, t, t.DB, c)
}

// UpdateCourse changes a course. A tutor who names the authors stays one
// of them.
func (s *Service) UpdateCourse(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64, in CourseChange) (CourseView, error) {
	now := s.now()
	var view CourseView
	var oldImage, newImage *string
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		old, err := ByID(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := allow(CanEdit(p, old)); err != nil {
			return err
		}
		var image *files.Image
		if in.Image != nil {
			img, err := files.CheckImage(in.Image, MaxImageSize, ErrImageTooLarge, "image")
			if err == nil {
				err = scan.Check(ctx, s.Scanner, bytes.NewReader(in.Image), "image")
			}
			if err != nil {
				return err
			}
			image = &img
		}
		c := old
		pr := problems{}
		in.apply(&c, pr)
		authors := in.Authors
		if authors != nil && !isAdmin(p) && !slices.Contains(authors, p.UserID) {
			authors = append(slices.Clone(authors), p.UserID)
		}
		if err := checkRefs(ctx, tx, pr, in.Categories, in.Authors); err != nil {
			return err
		}
		if err := pr.err(); err != nil {
			return err
		}
		if image != nil {
			key, err := files.StoreImage(ctx, t, imagePrefix(c.ID), *image)
			if err != nil {
				return fmt.Errorf("courses: %w", err)
			}
			newImage, oldImage = &key, old.ImagePath
			c.ImagePath = &key
		}
		if err := updateCourse(ctx, tx, now, c); err != nil {
			return err
		}
		var tags []string
		if in.Tags != nil {
			tags = c.Tags
		}
		if err := setRelations(ctx, tx, c.ID, in.Categories, tags); err != nil {
			return err
		}
		if authors != nil {
			if err := s.setAuthors(ctx, tx, now, c, old.Authors, sqldb.UniqueIDs(authors), 0); err != nil {
				return err
			}
		}
		if err := statusEvents(ctx, tx, now, p.UserID, &old, c); err != nil {
			return err
		}
		view, err = s.load(ctx, t, tx, c.ID)
		return err
	})
	if err != nil {
		dropFile(ctx, t, newImage)
		return CourseView{}, err
	}
	dropFile(ctx, t, oldImage)
	return view, nil
}

// DeleteCourse removes a course with its lessons, topics, access and
// files.
func (s *Service) DeleteCourse(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) error {
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		c, err := ByID(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := allow(CanDelete(p, c)); err != nil {
			return err
		}
		if err := s.removeTopicFiles(ctx, tx, id, 0); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM courses WHERE id = $1`, id); err != nil {
			return fmt.Errorf("courses: delete course %d: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The row is gone; a failed delete only leaves orphan files.
	_ = t.Blob.DeletePrefix(context.WithoutCancel(ctx), imagePrefix(id))
	return nil
}

// SortCourses sets the positions of courses to their order in ids, from
// 1. The caller must be able to edit every course named.
func (s *Service) SortCourses(ctx context.Context, t *platform.Tenant, p *access.Principal, ids []int64) error {
	if err := allow(CanList(p)); err != nil {
		return err
	}
	if len(ids) == 0 {
		return apperr.Field("courses", "The courses field must list at least one course id.")
	}
	now := s.now()
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		pr := problems{}
		var list []Course
		for i, id := range ids {
			c, err := ByID(ctx, tx, id)
			if apperr.Is(err, apperr.NotFound) {
				pr.add("courses."+strconv.Itoa(i), fmt.Sprintf("The course %d does not exist.", id))
				continue
			}
			if err != nil {
				return err
			}
			list = append(list, c)
		}
		if err := pr.err(); err != nil {
			return err
		}
		for _, c := range list {
			if !CanEdit(p, c) {
				return errUnauthorized
			}
		}
		for i, id := range ids {
			if _, err := tx.ExecContext(ctx, `UPDATE courses SET position = $1, updated_at = $2 WHERE id = $3`,
				i+1, now, id); err != nil {
				return fmt.Errorf("courses: sort: %w", err)
			}
		}
		return nil
	})
}

// CourseFilter selects courses for a list.
type CourseFilter struct {
	Title      string
	Status     string
	CategoryID int64
	Tag        string
	AuthorID   int64
	OrderBy    string
	Desc       bool
	Offset     int
	Limit      int
	// Listed keeps published and published_unactivated findable courses,
	// for the public catalogue.
	Listed bool
	// NotEndedAt hides courses whose active_to is not after it.
	NotEndedAt *time.Time
}

// ListCourses returns one page of the courses the caller may see in the
// admin API: every course for admins, their own for tutors.
func (s *Service) ListCourses(ctx context.Context, t *platform.Tenant, p *access.Principal, f CourseFilter) ([]CourseView, int64, error) {
	if err := allow(CanList(p)); err != nil {
		return nil, 0, err
	}
	if !ListAll(p) {
		f.restrictTo(p.UserID)
	}
	return s.list(ctx, t, f)
}

// restrictTo keeps only the courses the user authors; a filter naming
// another author finds nothing.
func (f *CourseFilter) restrictTo(userID int64) {
	if f.AuthorID != 0 && f.AuthorID != userID {
		f.AuthorID = -1
		return
	}
	f.AuthorID = userID
}

func (s *Service) list(ctx context.Context, t *platform.Tenant, f CourseFilter) ([]CourseView, int64, error) {
	cs, total, err := listCourses(ctx, t.DB, f)
	if err != nil {
		return nil, 0, err
	}
	views, err := s.views(ctx, t, t.DB, cs)
	return views, total, err
}

// TagCount is a tag with the number of courses carrying it.
type TagCount struct {
	Tag   string `json:"tag"`
	Count int64  `json:"count"`
}

// Tags lists the distinct tags of the courses the caller may see in the
// admin API, with counts.
func (s *Service) Tags(ctx context.Context, t *platform.Tenant, p *access.Principal) ([]TagCount, error) {
	if err := allow(CanList(p)); err != nil {
		return nil, err
	}
	var a sqldb.Args
	query := `SELECT tag, COUNT(*) FROM course_tags`
	if !ListAll(p) {
		query += ` WHERE course_id IN (SELECT course_id FROM course_authors WHERE user_id = ` + a.Add(p.UserID) + `)`
	}
	rows, err := t.DB.QueryContext(ctx, query+` GROUP BY tag ORDER BY tag`, a...)
	if err != nil {
		return nil, fmt.Errorf("courses: list tags: %w", err)
	}
	defer rows.Close()
	out := []TagCount{}
	for rows.Next() {
		var tc TagCount
		if err := rows.Scan(&tc.Tag, &tc.Count); err != nil {
			return nil, err
		}
		out = append(out, tc)
	}
	return out, rows.Err()
}

// CourseForm is what a course form offers to choose from.
type CourseForm struct {
	Statuses   []Status      `json:"statuses"`
	Levels     []string      `json:"levels"`
	Categories []CategoryRef `json:"categories"`
	Tutors     []UserRef     `json:"tutors"`
}

// CourseEditForm is a course with what its form offers.
type CourseEditForm struct {
	Course CourseView `json:"course"`
	CourseForm
}

// UserRef is a user as admin forms list one.
type UserRef struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// CreateForm returns the choices of a new course's form.
func (s *Service) CreateForm(ctx context.Context, t *platform.Tenant, p *access.Principal) (CourseForm, error) {
	if err := allow(CanCreate(p)); err != nil {
		return CourseForm{}, err
	}
	return courseForm(ctx, t.DB)
}

// EditForm returns a course with the choices of its form.
func (s *Service) EditForm(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (CourseEditForm, error) {
	c, err := ByID(ctx, t.DB, id)
	if err != nil {
		return CourseEditForm{}, err
	}
	if err := allow(CanEdit(p, c)); err != nil {
		return CourseEditForm{}, err
	}
	v, err := s.view(ctx, t, t.DB, c)
	if err != nil {
		return CourseEditForm{}, err
	}
	form, err := courseForm(ctx, t.DB)
	return CourseEditForm{Course: v, CourseForm: form}, err
}

func courseForm(ctx context.Context, q sqldb.Querier) (CourseForm, error) {
	form := CourseForm{Statuses: Statuses, Levels: Levels, Categories: []CategoryRef{}}
	categories, err := accounts.AllCategories(ctx, q)
	if err != nil {
		return form, err
	}
	for _, c := range categories {
		form.Categories = append(form.Categories, CategoryRef{ID: c.ID, Name: c.Name})
	}
	tutors, _, err := accounts.FindRefs(ctx, q, accounts.RefFilter{Roles: []string{access.Tutor, access.Admin}, Active: true})
	form.Tutors = userRefs(tutors)
	return form, err
}

// userRefs shows users as the course forms and pickers list them.
func userRefs(users []accounts.Ref) []UserRef {
	out := make([]UserRef, len(users))
	for i, u := range users {
		out[i] = UserRef{ID: u.ID, Name: u.Name(), Email: u.Email}
	}
	return out
}

// AssignableFilter selects users for the assignment picker.
type AssignableFilter struct {
	Search string
	// CourseID, when set, leaves out users assigned to it directly.
	CourseID int64
	Offset   int
	Limit    int
}

// AssignableUsers returns a page of active users that can be given access
// to courses.
func (s *Service) AssignableUsers(ctx context.Context, t *platform.Tenant, p *access.Principal, f AssignableFilter) ([]UserRef, int64, error) {
	if err := allow(CanList(p) && (p.Has(access.UserList) || p.Has(access.UserListCourseAuthored))); err != nil {
		return nil, 0, err
	}
	filter := accounts.RefFilter{Active: true, Search: f.Search, SearchEmail: true, Offset: f.Offset, Limit: f.Limit}
	if f.CourseID != 0 {
		assigned, err := int64s(ctx, t.DB, `SELECT user_id FROM course_users WHERE course_id = $1`, f.CourseID)
		if err != nil {
			return nil, 0, err
		}
		filter.Exclude = assigned
	}
	users, total, err := accounts.FindRefs(ctx, t.DB, filter)
	return userRefs(users), total, err
}
