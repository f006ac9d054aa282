package demo

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"strconv"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content/file"
	"github.com/lms-platform/lms/internal/content/h5pcontent"
	"github.com/lms-platform/lms/internal/content/project"
	"github.com/lms-platform/lms/internal/content/richtext"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/demo/quickcheck"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// SeedReport says what a seed made.
type SeedReport struct {
	Accounts int // accounts created
	Courses  int // courses created
	H5P      int // H5P packages imported
	// Refused lists the packages the H5P service refused, with its reason.
	Refused []string
}

// names of the demo accounts by role.
var names = map[string][2]string{
	access.Student: {"Demo", "Student"},
	access.Tutor:   {"Demo", "Tutor"},
	access.Admin:   {"Demo", "Admin"},
}

// Seed fills a demo tenant: the demo accounts, the baseline's students
// and the demo courses, published, with the demo student and the students
// given access. It only adds what is missing (accounts by e-mail, courses
// by title), so running it again changes nothing. The H5P packages of the
// content directory make one more course. It records the tenant as fresh,
// so that the scheduled reset waits for the next time of its schedule.
func (s *Service) Seed(ctx context.Context, rec platform.Record) (SeedReport, error) {
	t, release, err := s.Tenants.Get(ctx, rec)
	if err != nil {
		return SeedReport{}, err
	}
	defer release()
	return s.seed(ctx, t)
}

func (s *Service) seed(ctx context.Context, t *platform.Tenant) (SeedReport, error) {
	var rep SeedReport
	b, err := s.baseline(ctx, t.Record)
	if err != nil {
		return rep, err
	}
	for _, role := range Roles {
		made, err := s.ensureUser(ctx, t, Student{Email: s.Email(role), FirstName: names[role][0], LastName: names[role][1]}, role)
		if err != nil {
			return rep, fmt.Errorf("demo: %s account: %w", role, err)
		}
		rep.Accounts += made
	}
	var learners []int64
	for _, st := range b.Students {
		made, err := s.ensureUser(ctx, t, st, access.Student)
		if apperr.Is(err, apperr.Invalid) {
			s.logger().Warn("demo: baseline student skipped", "tenant", t.ID, "email", st.Email, "error", err)
			continue
		}
		if err != nil {
			return rep, err
		}
		rep.Accounts += made
		u, err := accounts.ByEmail(ctx, t.DB, st.Email)
		if err != nil {
			return rep, err
		}
		learners = append(learners, u.ID)
	}
	ids := map[string]int64{}
	for _, role := range Roles {
		u, err := s.Account(ctx, t, role)
		if err != nil {
			return rep, err
		}
		ids[role] = u.ID
		look := map[string]string{themeKey: b.Theme, accentKey: b.Accent}
		if _, err := s.Accounts.UpdateSettings(ctx, t, systemAdmin(t), u.ID, look, accounts.MergeSettings); err != nil {
			return rep, fmt.Errorf("demo: theme of the %s account: %w", role, err)
		}
	}
	learners = append([]int64{ids[access.Student]}, learners...)
	if err := s.seedCourses(ctx, t, ids, learners, &rep); err != nil {
		return rep, err
	}
	return rep, s.markFresh(ctx, t.ID, s.Clock.Now())
}

// ensureUser creates an active, verified account with one role unless its
// e-mail is taken; it returns 1 when it created one.
func (s *Service) ensureUser(ctx context.Context, t *platform.Tenant, st Student, role string) (int, error) {
	_, err := accounts.ByEmail(ctx, t.DB, st.Email)
	if err == nil {
		return 0, nil
	}
	if !apperr.Is(err, apperr.NotFound) {
		return 0, err
	}
	hash := st.PasswordHash
	if hash == "" {
		if hash, err = s.Passwords.Hash(randomPassword()); err != nil {
			return 0, err
		}
	}
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		_, err := accounts.Create(ctx, tx, s.Clock.Now(), accounts.NewUser{Email: st.Email, FirstName: st.FirstName,
			LastName: st.LastName, PasswordHash: hash, Roles: []string{role}, IsActive: true, Verified: true})
		return err
	})
	if err != nil {
		return 0, err
	}
	return 1, nil
}

func randomPassword() string {
	b := make([]byte, 18)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// seedCourses creates the demo courses the tenant lacks, as the demo
// admin through the API, with the demo tutor as their author.
func (s *Service) seedCourses(ctx context.Context, t *platform.Tenant, ids map[string]int64, learners []int64, rep *SeedReport) error {
	list, _, err := s.Courses.ListCourses(ctx, t, systemAdmin(t), courses.CourseFilter{Limit: 10000})
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, c := range list {
		have[c.Title] = true
	}
	pkgs, err := s.packages()
	if err != nil {
		// A wrong content directory costs the H5P course, not the demo.
		s.logger().Warn("demo: H5P packages skipped", "error", err)
		rep.Refused = append(rep.Refused, err.Error())
	}
	todo := demoCourses()
	if len(pkgs) > 0 {
		todo = append(todo, exercisesCourse())
	}
	var missing []course
	for _, c := range todo {
		if !have[c.Title] {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if s.API == nil {
		return fmt.Errorf("demo: no API to seed courses through")
	}
	issued, err := s.Auth.LoginUser(ctx, t, ids[access.Admin], true)
	if err != nil {
		return err
	}
	api := &apiClient{handler: s.API(), host: t.PrimaryHost(), token: issued.Token}
	defer api.json(context.WithoutCancel(ctx), http.MethodPost, "/api/auth/logout", nil, nil)
	for _, c := range missing {
		var packages []h5pPackage
		if c.Title == exercisesCourse().Title {
			packages = pkgs
		}
		made, err := s.createCourse(ctx, api, c, ids[access.Tutor], learners, packages, rep)
		if err != nil {
			return fmt.Errorf("demo: course %q: %w", c.Title, err)
		}
		if made {
			rep.Courses++
		}
	}
	return nil
}

type created struct {
	ID int64 `json:"id"`
}

// createCourse builds a course as a draft, publishes it when it is
// complete and gives the learners access. A course of H5P packages none
// of which the H5P service takes is deleted again.
func (s *Service) createCourse(ctx context.Context, api *apiClient, c course, tutorID int64, learners []int64,
	packages []h5pPackage, rep *SeedReport) (bool, error) {
	var made created
	body := map[string]any{"title": c.Title, "summary": c.Summary, "description": c.Description, "language": "en",
		"level": c.Level, "tags": c.Tags, "public": c.Public, "findable": true, "status": string(courses.Draft)}
	if tutorID != 0 {
		body["authors"] = []int64{tutorID}
	}
	if err := api.json(ctx, http.MethodPost, "/api/admin/courses", body, &made); err != nil {
		return false, err
	}
	path := "/api/admin/courses/" + strconv.FormatInt(made.ID, 10)
	if c.Cover != nil {
		if err := api.form(ctx, http.MethodPost, path, nil, upload{"image", "cover.png", c.Cover()}, nil); err != nil {
			return false, err
		}
	}
	imported := 0
	for _, l := range c.Lessons {
		var les created
		err := api.json(ctx, http.MethodPost, "/api/admin/lessons", map[string]any{"course_id": made.ID, "title": l.Title,
			"summary": l.Summary, "duration": l.Duration}, &les)
		if err != nil {
			return false, err
		}
		for _, tp := range l.Topics {
			err := createTopic(ctx, api, les.ID, tp)
			if err != nil && tp.Kind == kindH5P {
				// As for the content directory's packages: an H5P service
				// that refuses or cannot be reached costs the exercise, not
				// the course.
				s.logger().Warn("demo: H5P topic skipped", "topic", tp.Title, "error", err)
				rep.Refused = append(rep.Refused, tp.FileName+": "+err.Error())
				continue
			}
			if err != nil {
				return false, fmt.Errorf("topic %q: %w", tp.Title, err)
			}
			if tp.Kind == kindH5P {
				rep.H5P++
			}
		}
		if len(l.Topics) == 0 {
			for _, p := range packages {
				if err := s.importPackage(ctx, api, les.ID, p); err != nil {
					s.logger().Warn("demo: H5P package refused", "package", p.Name, "error", err)
					rep.Refused = append(rep.Refused, p.Name+": "+err.Error())
					continue
				}
				imported++
				rep.H5P++
			}
		}
	}
	if packages != nil && imported == 0 {
		return false, api.json(ctx, http.MethodDelete, path, nil, nil)
	}
	if err := api.json(ctx, http.MethodPatch, path, map[string]any{"status": string(courses.Published)}, nil); err != nil {
		return false, err
	}
	grants := make([]map[string]any, len(learners))
	for i, id := range learners {
		grants[i] = map[string]any{"id": id}
	}
	return true, api.json(ctx, http.MethodPost, path+"/access", map[string]any{"users": grants}, nil)
}

// createTopic creates one topic: JSON for text, video and projects,
// multipart form data with the generated file (or H5P package) for the
// others.
func createTopic(ctx context.Context, api *apiClient, lessonID int64, tp topic) error {
	fields := map[string]any{"lesson": lessonID, "title": tp.Title, "summary": tp.Summary, "duration": tp.Duration,
		"preview": tp.Preview}
	var class, name string
	switch tp.Kind {
	case kindText:
		fields["topicable"], fields["markdown"] = richtext.Class, tp.Markdown
	case kindVideo:
		fields["topicable"], fields["videoSiteUrl"] = file.Video().Class(), tp.VideoURL
	case kindProject:
		fields["topicable"], fields["instructions"], fields["accept"] = project.Class, tp.Markdown, tp.Accept
	case kindImage:
		class, name = file.Image().Class(), tp.FileName
	case kindPDF:
		class, name = file.PDF().Class(), tp.FileName
	case kindAudio:
		class, name = file.Audio().Class(), tp.FileName
	case kindH5P:
		// The package is made now and goes through the topics route like
		// any uploaded package (see importPackage).
		pkg, err := quickcheck.Package(*tp.Quiz)
		if err != nil {
			return err
		}
		form := map[string]string{"topicable": h5pcontent.Class}
		for k, v := range fields {
			form[k] = fmt.Sprint(v)
		}
		return api.form(ctx, http.MethodPost, "/api/admin/topics", form, upload{"package", tp.FileName, pkg}, nil)
	default:
		return fmt.Errorf("unknown kind %q", tp.Kind)
	}
	if class == "" {
		return api.json(ctx, http.MethodPost, "/api/admin/topics", fields, nil)
	}
	form := map[string]string{"topicable": class}
	for k, v := range fields {
		form[k] = fmt.Sprint(v)
	}
	return api.form(ctx, http.MethodPost, "/api/admin/topics", form, upload{"file", name, tp.File()}, nil)
}

// importPackage creates an H5P topic from a package: the topics route
// sends it to the H5P service, which validates and stores it.
func (s *Service) importPackage(ctx context.Context, api *apiClient, lessonID int64, p h5pPackage) error {
	data, err := os.ReadFile(p.Path)
	if err != nil {
		return err
	}
	form := map[string]string{"lesson": strconv.FormatInt(lessonID, 10), "title": p.Title, "topicable": h5pcontent.Class,
		"summary": "An interactive exercise: finish it to complete the topic.", "duration": "3 min"}
	return api.form(ctx, http.MethodPost, "/api/admin/topics", form, upload{"package", p.Name, data}, nil)
}
