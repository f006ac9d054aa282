package demo

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"slices"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/demo/cmi5demo"
	"github.com/lms-platform/lms/internal/demo/quickcheck"
	"github.com/lms-platform/lms/internal/demo/scormdemo"
	"github.com/lms-platform/lms/internal/demo/simdemo"
	"github.com/lms-platform/lms/internal/kinds/cmi5"
	"github.com/lms-platform/lms/internal/kinds/file"
	"github.com/lms-platform/lms/internal/kinds/h5pcontent"
	"github.com/lms-platform/lms/internal/kinds/interactive"
	"github.com/lms-platform/lms/internal/kinds/layout"
	"github.com/lms-platform/lms/internal/kinds/liascript"
	"github.com/lms-platform/lms/internal/kinds/project"
	"github.com/lms-platform/lms/internal/kinds/quiz"
	"github.com/lms-platform/lms/internal/kinds/richtext"
	"github.com/lms-platform/lms/internal/kinds/scorm"
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
	api, err := apiClient(s.API(), t.PrimaryHost(), issued.Token)
	if err != nil {
		return err
	}
	defer api.PostAuthLogout(context.WithoutCancel(ctx))
	if slices.ContainsFunc(missing, hasFilm) {
		if err := videoSettings(ctx, api); err != nil {
			return err
		}
	}
	if slices.ContainsFunc(missing, hasQuiz) {
		if err := quizSettings(ctx, api); err != nil {
			return err
		}
	}
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

// createCourse builds a course as a draft, publishes it when it is
// complete and gives the learners access. A course of H5P packages none
// of which the H5P service takes is deleted again.
func (s *Service) createCourse(ctx context.Context, api *client.Client, c course, tutorID int64, learners []int64,
	packages []h5pPackage, rep *SeedReport) (bool, error) {
	body := client.CourseBody{Title: c.Title, Summary: &c.Summary, Description: &c.Description, Language: client.Ptr("en"),
		Level: &c.Level, Tags: c.Tags, Public: &c.Public, Findable: client.Ptr(true), Status: client.Ptr(string(courses.Draft))}
	if tutorID != 0 {
		body.Authors = []int64{tutorID}
	}
	made, err := api.PostAdminCourses(ctx, body)
	if err != nil {
		return false, err
	}
	if c.Cover != nil {
		cover := &client.File{Name: "cover.png", Content: bytes.NewReader(c.Cover())}
		if _, err := api.PostAdminCoursesIDMultipart(ctx, made.ID, client.PostAdminCoursesIDForm{Image: cover}); err != nil {
			return false, err
		}
	}
	imported := 0
	for _, l := range c.Lessons {
		les, err := api.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: made.ID, Title: l.Title,
			Summary: &l.Summary, Duration: &l.Duration})
		if err != nil {
			return false, err
		}
		for _, tp := range l.Topics {
			if tp.Film != nil {
				f := tp.Film
				tp.File = func() []byte { return s.movie(ctx, f) }
			}
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
		return false, api.DeleteAdminCoursesID(ctx, made.ID)
	}
	if _, err := api.PatchAdminCoursesID(ctx, made.ID, client.CoursePatch{Status: client.Ptr(string(courses.Published))}); err != nil {
		return false, err
	}
	grants := make([]client.GrantBody, len(learners))
	for i, id := range learners {
		grants[i] = client.GrantBody{ID: id}
	}
	_, err = api.PostAdminCoursesIDAccess(ctx, made.ID, client.AssignInputBody{Users: grants})
	return true, err
}

// createTopic creates one topic: JSON for text, layouts, quizzes and
// projects, multipart form data with the generated file (or H5P or SCORM
// package) for the others.
func createTopic(ctx context.Context, api *client.Client, lessonID int64, tp topic) error {
	body := client.PostAdminTopicsBody{Lesson: lessonID, Title: tp.Title, Summary: &tp.Summary, Duration: &tp.Duration,
		Preview: &tp.Preview}
	form := client.PostAdminTopicsForm{Lesson: lessonID, Title: tp.Title, Summary: &tp.Summary, Duration: &tp.Duration,
		Preview: &tp.Preview}
	var class string
	switch tp.Kind {
	case kindText:
		body.Topicable, body.Markdown = richtext.Class, &tp.Markdown
	case kindProject:
		body.Topicable, body.Instructions, body.Accept = project.Class, &tp.Markdown, &tp.Accept
	case kindLayout:
		body.Topicable, body.Document, body.Fallback = layout.Class, tp.Layout, &tp.Markdown
	case kindQuiz:
		body.Topicable, body.Value = quiz.Class, tp.Markdown
		body.MinPassScore = &tp.PassScore
		for _, g := range tp.GIFT {
			body.Questions = append(body.Questions, client.PostAdminTopicsBodyQuestionsItem{Gift: client.Ptr(g)})
		}
	case kindImage:
		class = file.Image().Class()
	case kindPDF:
		class = file.PDF().Class()
	case kindAudio:
		class = file.Audio().Class()
	case kindVideo:
		// Transcoded by the job queue like any uploaded video.
		class = file.Video().Class()
	case kindH5P:
		// The package is made now and goes through the topics route like
		// any uploaded package (see importPackage).
		pkg, err := quickcheck.Package(*tp.Quiz)
		if err != nil {
			return err
		}
		form.Topicable = h5pcontent.Class
		form.ExtraFiles = map[string]client.File{"package": {Name: tp.FileName, Content: bytes.NewReader(pkg)}}
		_, err = api.PostAdminTopicsMultipart(ctx, form)
		return err
	case kindScorm:
		pkg, err := scormdemo.Package()
		if err != nil {
			return err
		}
		form.Topicable = scorm.Class
		form.ExtraFiles = map[string]client.File{"package": {Name: tp.FileName, Content: bytes.NewReader(pkg)}}
		_, err = api.PostAdminTopicsMultipart(ctx, form)
		return err
	case kindInteractive:
		// The package is made now, uploaded to the package library, and
		// the topic completes when the app says the last step is done.
		pkg, err := simdemo.Package()
		if err != nil {
			return err
		}
		up, err := api.PostAdminInteractive(ctx, client.PostAdminInteractiveForm{
			File: &client.File{Name: tp.FileName, Content: bytes.NewReader(pkg)}})
		if err != nil {
			return err
		}
		body.Topicable, body.Package, body.Text = interactive.Class, &up.ID, &tp.Markdown
		body.Completion, body.Height = client.Ptr(interactive.OnComplete), client.Ptr(int64(560))
	case kindLiaScript:
		body.Topicable, body.Markdown = liascript.Class, &tp.Markdown
	case kindCmi5:
		pkg, err := cmi5demo.Package()
		if err != nil {
			return err
		}
		form.Topicable = cmi5.TopicClass
		form.ExtraFiles = map[string]client.File{"package": {Name: tp.FileName, Content: bytes.NewReader(pkg)}}
		_, err = api.PostAdminTopicsMultipart(ctx, form)
		return err
	default:
		return fmt.Errorf("unknown kind %q", tp.Kind)
	}
	if class == "" {
		_, err := api.PostAdminTopics(ctx, body)
		return err
	}
	form.Topicable = class
	form.File = &client.File{Name: tp.FileName, Content: bytes.NewReader(tp.File())}
	_, err := api.PostAdminTopicsMultipart(ctx, form)
	return err
}

// importPackage creates an H5P topic from a package: the topics route
// sends it to the H5P service, which validates and stores it.
func (s *Service) importPackage(ctx context.Context, api *client.Client, lessonID int64, p h5pPackage) error {
	f, err := os.Open(p.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = api.PostAdminTopicsMultipart(ctx, client.PostAdminTopicsForm{Lesson: lessonID, Title: p.Title,
		Topicable: h5pcontent.Class, Summary: client.Ptr("An interactive exercise: finish it to complete the topic."),
		Duration: client.Ptr("3 min"), ExtraFiles: map[string]client.File{"package": {Name: p.Name, Content: f}}})
	return err
}
