package courses

import "github.com/lms-platform/lms/internal/access"

// The course policy: admins hold the unqualified permissions; tutors hold
// the "_authored" ones and may act only on courses they author.

// CanCreate reports whether p may create courses.
func CanCreate(p *access.Principal) bool { return p.Has(access.CourseCreate) }

// CanList reports whether p may list courses in the admin API; tutors see
// only the courses they author (see ListAll).
func CanList(p *access.Principal) bool {
	return p.Has(access.CourseList) || p.Has(access.CourseListAuthored)
}

// ListAll reports whether p sees every course in admin lists.
func ListAll(p *access.Principal) bool { return p.Has(access.CourseRead) }

// CanRead reports whether p may read the course in the admin API.
func CanRead(p *access.Principal, c Course) bool {
	return p.Has(access.CourseRead) || (p.Has(access.CourseReadAuthored) && c.HasAuthor(p.UserID))
}

// CanEdit reports whether p may change the course, its lessons, topics,
// access and tutors.
func CanEdit(p *access.Principal, c Course) bool {
	return p.Has(access.CourseUpdate) || (p.Has(access.CourseUpdateAuthored) && c.HasAuthor(p.UserID))
}

// CanDelete reports whether p may delete the course.
func CanDelete(p *access.Principal, c Course) bool {
	return p.Has(access.CourseDelete) || (p.Has(access.CourseDeleteAuthored) && c.HasAuthor(p.UserID))
}
