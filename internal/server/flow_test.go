package server_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/blob"
)

// TestCourseLifecycle follows a course through every capability's real
// routes: an admin authors it, a learner is assigned and finishes it, a new
// topic re-opens it, and submitting a project completes it again.
func TestCourseLifecycle(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, admin := t.Context(), env.ClientAs("admin")
		learner := env.NewUser("student")
		student := env.UserClient(learner)
		course := apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Go basics", Status: client.Ptr("published")}))(t).ID
		lesson := apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "Start"}))(t).ID
		topic := func(title string) int64 {
			return apitest.Must(admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: title,
				Topicable: `Lms\TopicTypes\Models\TopicContent\RichText`, Markdown: client.Ptr("# " + title)}))(t).ID
		}
		first := topic("Welcome")
		// Not assigned yet: no program.
		_, err := student.GetCoursesIDProgram(ctx, course)
		apitest.Refused(t, err, 403)
		apitest.Must(admin.PostAdminCoursesIDAccess(ctx, course, client.AssignInputBody{Users: []client.GrantBody{{ID: learner.ID}}}))(t)
		program := apitest.Must(student.GetCoursesIDProgram(ctx, course))(t)
		if len(program.Lessons) == 0 || len(program.Lessons[0].Topics) == 0 {
			t.Fatalf("program without the topic: %+v", program)
		}
		if html, _ := program.Lessons[0].Topics[0].Topicable.(map[string]any)["html"].(string); html != "<h1>Welcome</h1>\n" {
			t.Fatalf("program content %q", html)
		}

		before := env.LastEventID()
		apitest.Must(student.PatchCoursesProgressID(ctx, course, client.WriteInputBody{
			Progress: []client.ProgressWrite{{TopicID: first, Status: 1}}}))(t)
		assertEvents(t, env, before, "CourseStarted", "TopicFinished", "LessonFinished", "CourseFinished")
		if p := apitest.Must(student.GetCoursesProgressID(ctx, course))(t); p.Status != "finished" {
			t.Fatal("the course must be finished")
		}

		// A new project topic re-opens the finished course.
		project := apitest.Must(admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "Build something",
			Topicable: `Lms\TopicTypeProject\Models\Project`, Value: map[string]any{"instructions": "Upload your program."}}))(t).ID
		env.DeliverEvents()
		if got := apitest.Must(student.GetCoursesProgressID(ctx, course))(t); got.Status != "started" || got.FinishedAt != nil {
			t.Fatalf("an added topic must re-open the course: %+v", got)
		}

		// Submitting the project completes the topic and the course again.
		before = env.LastEventID()
		apitest.Must(student.PostTopicsIDProject(ctx, project, client.PostTopicsIDProjectForm{
			File: &client.File{Name: "main.txt", Content: strings.NewReader("package main\n")}}))(t)
		assertEvents(t, env, before, "TopicFinished", "LessonFinished", "CourseFinished")
	})
}

func assertEvents(t *testing.T, env *apitest.Env, after int64, want ...string) {
	t.Helper()
	got := env.EventNames(after)
	if len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %v, want %v", got, want)
		}
	}
}

// TestDeletesLeaveNoFiles deletes a lesson whose nested lesson holds a PDF
// topic with an attachment, then a course, and checks the blob store.
func TestDeletesLeaveNoFiles(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, admin := t.Context(), env.ClientAs("admin")
		files := func() []string {
			tn, release := env.OpenTenant(env.Tenant)
			defer release()
			var keys []string
			tn.Blob.List(t.Context(), "", func(i blob.Info) error { keys = append(keys, i.Key); return nil })
			return keys
		}
		pdf := []byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
		for _, target := range []string{"lesson", "course"} {
			course := apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Files " + target}))(t).ID
			outer := apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "Outer"}))(t).ID
			inner := apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course,
				ParentLessonID: client.Ptr(outer), Title: "Inner"}))(t).ID
			topic := apitest.Must(admin.PostAdminTopicsMultipart(ctx, client.PostAdminTopicsForm{Lesson: inner, Title: "Notes",
				Topicable: `Lms\TopicTypes\Models\TopicContent\PDF`, File: &client.File{Name: "notes.pdf", Content: bytes.NewReader(pdf)}}))(t).ID
			apitest.Must(admin.PostAdminTopicsIDResources(ctx, topic, client.PostAdminTopicsIDResourcesForm{
				Resource: &client.File{Name: "extra.txt", Content: strings.NewReader("more")}}))(t)
			if len(files()) < 2 {
				t.Fatalf("files were not stored: %v", files())
			}
			if target == "course" {
				apitest.OK(t, admin.DeleteAdminCoursesID(ctx, course))
			} else {
				apitest.OK(t, admin.DeleteAdminLessonsID(ctx, outer))
			}
			// The files go once the delete's TopicsRemoved is delivered.
			env.DeliverEvents()
			if left := files(); len(left) != 0 {
				t.Fatalf("deleting the %s left files: %v", target, left)
			}
		}
	})
}
