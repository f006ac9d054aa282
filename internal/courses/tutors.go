package courses

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
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
	found, err := usersExist(ctx, q, []int64{userID})
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

// publishedAuthors counts, for each user who authors a published course,
// the published courses they author.
func publishedAuthors(ctx context.Context, q sqldb.Querier) (map[int64]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT ca.user_id, COUNT(*) FROM course_authors ca JOIN courses c ON c.id = ca.course_id
		WHERE c.status IN ($1, $2) GROUP BY ca.user_id`, string(Published), string(PublishedUnactivated))
	if err != nil {
		return nil, fmt.Errorf("courses: count authored courses: %w", err)
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var user, n int64
		if err := rows.Scan(&user, &n); err != nil {
			return nil, err
		}
		out[user] = n
	}
	return out, rows.Err()
}

// tutors returns the page f selects of the active tutors among the
// published authors of ids (all of them when ids is nil), by id.
func tutors(ctx context.Context, q sqldb.Querier, ids []int64, f TutorFilter) ([]Tutor, int64, error) {
	counts, err := publishedAuthors(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	authors := []int64{}
	for id := range counts {
		if ids == nil || slices.Contains(ids, id) {
			authors = append(authors, id)
		}
	}
	users, total, err := accounts.FindRefs(ctx, q, accounts.RefFilter{IDs: authors, Roles: []string{access.Tutor},
		Active: true, Search: f.Search, Offset: f.Offset, Limit: f.Limit})
	if err != nil {
		return nil, 0, err
	}
	out := make([]Tutor, len(users))
	for i, u := range users {
		out[i] = Tutor{ID: u.ID, Name: u.Name(), FirstName: u.FirstName, LastName: u.LastName, Bio: u.Bio,
			AvatarPath: u.AvatarPath, Courses: counts[u.ID]}
	}
	return out, total, nil
}

// Tutors returns a page of the users with the role tutor who author at
// least one published course.
func (s *Service) Tutors(ctx context.Context, t *platform.Tenant, f TutorFilter) ([]Tutor, int64, error) {
	return tutors(ctx, t.DB, nil, f)
}

// Tutor returns a tutor of published courses with those courses that are
// findable; NotFound for any other user.
func (s *Service) Tutor(ctx context.Context, t *platform.Tenant, id int64) (TutorDetail, error) {
	list, _, err := tutors(ctx, t.DB, []int64{id}, TutorFilter{})
	if err != nil {
		return TutorDetail{}, err
	}
	if len(list) == 0 {
		return TutorDetail{}, apperr.New(apperr.NotFound, "Tutor not found.")
	}
	cs, _, err := s.list(ctx, t, CourseFilter{Listed: true, AuthorID: id, OrderBy: "position", Limit: 1000})
	if err != nil {
		return TutorDetail{}, err
	}
	return TutorDetail{Tutor: list[0], CourseList: cs}, nil
}
