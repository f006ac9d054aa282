package courses

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Tutors are the authors of courses: users with the role tutor or admin
// whom a course names. The admin routes add and remove one; the public
// routes list tutors of published courses.

// setAuthors makes after the course's authors, recording
// CourseTutorAssigned for each one added (except creator, who made the
// course) and CourseTutorUnassigned for each one removed.
func (s *Service) setAuthors(ctx context.Context, tx *sqldb.Tx, now time.Time, c Course, before, after []int64, creator int64) error {
	for _, id := range after {
		if slices.Contains(before, id) {
			continue
		}
		if err := addAuthor(ctx, tx, now, c, id, id != creator); err != nil {
			return err
		}
	}
	for _, id := range before {
		if slices.Contains(after, id) {
			continue
		}
		if err := removeAuthor(ctx, tx, now, c, id); err != nil {
			return err
		}
	}
	return nil
}

func tutorPayload(c Course, userID int64) map[string]any {
	return map[string]any{"course_id": c.ID, "title": c.Title, "user_id": userID}
}

// addAuthor makes the user an author, recording CourseTutorAssigned when
// record is set.
func addAuthor(ctx context.Context, tx *sqldb.Tx, now time.Time, c Course, userID int64, record bool) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO course_authors (course_id, user_id) VALUES ($1, $2)`, c.ID, userID); err != nil {
		return fmt.Errorf("courses: add author: %w", err)
	}
	if !record {
		return nil
	}
	return events.Emit(ctx, tx, now, events.Event{Name: events.CourseTutorAssigned, UserID: userID, Payload: tutorPayload(c, userID)})
}

func removeAuthor(ctx context.Context, tx *sqldb.Tx, now time.Time, c Course, userID int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM course_authors WHERE course_id = $1 AND user_id = $2`, c.ID, userID); err != nil {
		return fmt.Errorf("courses: remove author: %w", err)
	}
	return events.Emit(ctx, tx, now, events.Event{Name: events.CourseTutorUnassigned, UserID: userID, Payload: tutorPayload(c, userID)})
}

// AssignTutor makes a tutor or an admin an author of the course. It
// reports whether the user was not one yet; assigning again changes
// nothing and records nothing.
func (s *Service) AssignTutor(ctx context.Context, t *platform.Tenant, p *access.Principal, userID, courseID int64) (CourseView, bool, error) {
	return s.changeTutor(ctx, t, p, userID, courseID, true)
}

// UnassignTutor removes an author from the course. It reports whether the
// user was one.
func (s *Service) UnassignTutor(ctx context.Context, t *platform.Tenant, p *access.Principal, userID, courseID int64) (CourseView, bool, error) {
	return s.changeTutor(ctx, t, p, userID, courseID, false)
}

func (s *Service) changeTutor(ctx context.Context, t *platform.Tenant, p *access.Principal, userID, courseID int64, assign bool) (CourseView, bool, error) {
	now := s.now()
	var view CourseView
	changed := false
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		c, err := ByID(ctx, tx, courseID)
		if err != nil {
			return err
		}
		if err := allow(CanEdit(p, c)); err != nil {
			return err
		}
		if err := userExists(ctx, tx, userID); err != nil {
			return err
		}
		if assign {
			capable, err := authorCapable(ctx, tx, []int64{userID})
			if err != nil {
				return err
			}
			if !capable[userID] {
				return apperr.Field("id", "Only a tutor or an admin can author a course.")
			}
		}
		switch {
		case assign && !c.HasAuthor(userID):
			changed = true
			err = addAuthor(ctx, tx, now, c, userID, true)
		case !assign && c.HasAuthor(userID):
			changed = true
			err = removeAuthor(ctx, tx, now, c, userID)
		}
		if err != nil {
			return err
		}
		view, err = s.load(ctx, t, tx, courseID)
		return err
	})
	return view, changed, err
}

// userExists is NotFound for an unknown user.
func userExists(ctx context.Context, q sqldb.Querier, userID int64) error {
	found, err := existing(ctx, q, `SELECT id FROM users WHERE id IN (`, []int64{userID})
	if err != nil {
		return err
	}
	if !found[userID] {
		return apperr.New(apperr.NotFound, "User not found.")
	}
	return nil
}

// Tutor is a tutor as the public catalogue shows one.
type Tutor struct {
	ID         int64   `json:"id"`
	Name       string  `json:"name"`
	FirstName  string  `json:"first_name"`
	LastName   string  `json:"last_name"`
	Bio        *string `json:"bio"`
	AvatarPath *string `json:"path_avatar"`
	// Courses is the number of published courses the tutor authors.
	Courses int64 `json:"courses_count"`
}

// TutorDetail is a tutor with its published, findable courses.
type TutorDetail struct {
	Tutor
	CourseList []CourseView `json:"courses"`
}

// TutorFilter selects tutors for the public list.
type TutorFilter struct {
	Search string
	Offset int
	Limit  int
}

// publishedAuthors is the condition on users "u" of tutors who author a
// published course; it takes its arguments from a.
func publishedAuthors(a *sqldb.Args) string {
	return `u.is_active = ` + a.Add(true) + ` AND EXISTS (SELECT 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id
		WHERE ur.user_id = u.id AND r.name = ` + a.Add(access.Tutor) + `)`
}

// publishedCount counts the published courses of u.
func publishedCount(a *sqldb.Args) string {
	return `(SELECT COUNT(*) FROM course_authors ca JOIN courses c ON c.id = ca.course_id
		WHERE ca.user_id = u.id AND c.status IN (` + a.Add(string(Published)) + `, ` + a.Add(string(PublishedUnactivated)) + `))`
}

// Tutors returns a page of the users with the role tutor who author at
// least one published course.
func (s *Service) Tutors(ctx context.Context, t *platform.Tenant, f TutorFilter) ([]Tutor, int64, error) {
	var a sqldb.Args
	count := publishedCount(&a)
	cond := ` WHERE ` + publishedAuthors(&a) + ` AND ` + count + ` > 0`
	if strings.TrimSpace(f.Search) != "" {
		cond += ` AND LOWER(u.first_name || ' ' || u.last_name) LIKE LOWER(` + a.Add(sqldb.Contains(f.Search)) + `) ESCAPE '\'`
	}
	var total int64
	if err := t.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM users u`+cond, a...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("courses: count tutors: %w", err)
	}
	tutors, err := queryTutors(ctx, t.DB, `SELECT u.id, u.first_name, u.last_name, u.bio, u.avatar_path, `+count+
		` FROM users u`+cond+` ORDER BY u.id LIMIT `+a.Add(f.Limit)+` OFFSET `+a.Add(f.Offset), a...)
	return tutors, total, err
}

// Tutor returns a tutor of published courses with those courses that are
// findable; NotFound for any other user.
func (s *Service) Tutor(ctx context.Context, t *platform.Tenant, id int64) (TutorDetail, error) {
	var a sqldb.Args
	count := publishedCount(&a)
	tutors, err := queryTutors(ctx, t.DB, `SELECT u.id, u.first_name, u.last_name, u.bio, u.avatar_path, `+count+
		` FROM users u WHERE `+publishedAuthors(&a)+` AND `+count+` > 0 AND u.id = `+a.Add(id), a...)
	if err != nil {
		return TutorDetail{}, err
	}
	if len(tutors) == 0 {
		return TutorDetail{}, apperr.New(apperr.NotFound, "Tutor not found.")
	}
	cs, _, err := s.list(ctx, t, CourseFilter{Listed: true, AuthorID: id, OrderBy: "position", Limit: 1000})
	if err != nil {
		return TutorDetail{}, err
	}
	return TutorDetail{Tutor: tutors[0], CourseList: cs}, nil
}

func queryTutors(ctx context.Context, q sqldb.Querier, query string, a ...any) ([]Tutor, error) {
	rows, err := q.QueryContext(ctx, query, a...)
	if err != nil {
		return nil, fmt.Errorf("courses: list tutors: %w", err)
	}
	defer rows.Close()
	out := []Tutor{}
	for rows.Next() {
		var tu Tutor
		if err := rows.Scan(&tu.ID, &tu.FirstName, &tu.LastName, &tu.Bio, &tu.AvatarPath, &tu.Courses); err != nil {
			return nil, err
		}
		tu.Name = strings.TrimSpace(tu.FirstName + " " + tu.LastName)
		out = append(out, tu)
	}
	return out, rows.Err()
}
