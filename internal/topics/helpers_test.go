package topics_test

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/platform"
)

const (
	richClass    = `Lms\TopicTypes\Models\TopicContent\RichText`
	pdfClass     = `Lms\TopicTypes\Models\TopicContent\PDF`
	imageClass   = `Lms\TopicTypes\Models\TopicContent\Image`
	videoClass   = `Lms\TopicTypes\Models\TopicContent\Video`
	projectClass = `Lms\TopicTypeProject\Models\Project`
)

var (
	pdfData = []byte("%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n")
	pngData = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 100)...)
	mp4Data = []byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom and the movie")
)

// world is a tenant with two courses: one the tutor authors (with two
// lessons) and one the tutor does not author.
type world struct {
	env                 *apitest.Env
	admin, tutor        *apitest.User
	otherTutor, student *apitest.User
	course, lesson      int64
	lesson2             int64
	foreignCourse       int64
	foreignLesson       int64
}

func newWorld(t *testing.T, env *apitest.Env) *world {
	t.Helper()
	w := &world{env: env, admin: env.As("admin"), tutor: env.As("tutor"), otherTutor: env.NewUser("tutor"),
		student: env.As("student")}
	w.course = insertCourse(t, env, "published", w.tutor.ID)
	w.lesson = insertLesson(t, env, w.course, 1)
	w.lesson2 = insertLesson(t, env, w.course, 2)
	w.foreignCourse = insertCourse(t, env, "published", w.otherTutor.ID)
	w.foreignLesson = insertLesson(t, env, w.foreignCourse, 1)
	return w
}

// The course and lesson routes belong to package courses; the rows are
// written straight into the tenant database.
func insertCourse(t *testing.T, env *apitest.Env, status string, authors ...int64) int64 {
	t.Helper()
	var id int64
	exec(t, env, func(tn *platform.Tenant) error {
		now := env.Clock.Now()
		err := tn.DB.QueryRowContext(context.Background(), `INSERT INTO courses (title, status, created_at, updated_at)
			VALUES ($1, $2, $3, $3) RETURNING id`, "Course", status, now).Scan(&id)
		for _, a := range authors {
			if err == nil {
				_, err = tn.DB.ExecContext(context.Background(), `INSERT INTO course_authors (course_id, user_id) VALUES ($1, $2)`, id, a)
			}
		}
		return err
	})
	return id
}

func insertLesson(t *testing.T, env *apitest.Env, course int64, pos int) int64 {
	t.Helper()
	var id int64
	exec(t, env, func(tn *platform.Tenant) error {
		return tn.DB.QueryRowContext(context.Background(), `INSERT INTO lessons (course_id, title, position, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $4) RETURNING id`, course, "Lesson", pos, env.Clock.Now()).Scan(&id)
	})
	return id
}

func assign(t *testing.T, env *apitest.Env, course, user int64) {
	t.Helper()
	exec(t, env, func(tn *platform.Tenant) error {
		_, err := tn.DB.ExecContext(context.Background(), `INSERT INTO course_users (course_id, user_id, created_at) VALUES ($1, $2, $3)`,
			course, user, env.Clock.Now())
		return err
	})
}

func exec(t *testing.T, env *apitest.Env, fn func(*platform.Tenant) error) {
	t.Helper()
	tn, release := env.OpenTenant(env.Tenant)
	defer release()
	if err := fn(tn); err != nil {
		t.Fatal(err)
	}
}

// blobKeys lists the tenant's stored files under prefix.
func blobKeys(t *testing.T, env *apitest.Env, prefix string) []string {
	t.Helper()
	keys := []string{}
	exec(t, env, func(tn *platform.Tenant) error {
		return tn.Blob.List(context.Background(), prefix, func(i blob.Info) error {
			keys = append(keys, i.Key)
			return nil
		})
	})
	return keys
}

func blobBytes(t *testing.T, env *apitest.Env, key string) []byte {
	t.Helper()
	var data []byte
	exec(t, env, func(tn *platform.Tenant) error {
		rc, _, err := tn.Blob.Get(context.Background(), key)
		if err != nil {
			return err
		}
		defer rc.Close()
		data, err = io.ReadAll(rc)
		return err
	})
	return data
}

// part is one field of a multipart body: text, or a file when name is
// set.
type part struct {
	field, name string
	data        []byte
}

func text(field, value string) part          { return part{field: field, data: []byte(value)} }
func file(field, name string, d []byte) part { return part{field: field, name: name, data: d} }

func multipartBody(t *testing.T, parts ...part) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, p := range parts {
		var err error
		var dst io.Writer
		if p.name != "" {
			dst, err = w.CreateFormFile(p.field, p.name)
		} else {
			dst, err = w.CreateFormField(p.field)
		}
		if err == nil {
			_, err = dst.Write(p.data)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// bigUpload streams a multipart body with text fields and one file of
// size bytes, made as it is sent.
func bigUpload(fields map[string]string, field, name string, size int64) (io.Reader, string) {
	pr, pw := io.Pipe()
	w := multipart.NewWriter(pw)
	go func() {
		for k, v := range fields {
			w.WriteField(k, v)
		}
		dst, err := w.CreateFormFile(field, name)
		if err == nil {
			head := []byte("%PDF-1.7\n")
			if strings.HasSuffix(name, ".png") {
				head = pngData[:8]
			}
			dst.Write(head)
			_, err = io.Copy(dst, io.LimitReader(zeros{}, size-int64(len(head))))
		}
		if err == nil {
			err = w.Close()
		}
		pw.CloseWithError(err)
	}()
	return pr, w.FormDataContentType()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// send makes one request and fails the test unless the status is want.
func send(t *testing.T, env *apitest.Env, want int, method, path string, u *apitest.User, body any, ctype string) *apitest.Response {
	t.Helper()
	req := apitest.Request{Method: method, Path: path, Body: body, Type: ctype}
	if u != nil {
		req.Token = u.Token
	}
	res := env.Do(req)
	if res.Status != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, res.Status, want, res.Body)
	}
	return res
}

func id(n int64) string { return strconv.FormatInt(n, 10) }

func num(res *apitest.Response, path string) int64 { return int64(res.Number(path)) }

// fetch follows a signed link without a token.
func fetch(t *testing.T, env *apitest.Env, link string, headers map[string]string) *apitest.Response {
	t.Helper()
	if _, err := url.Parse(link); err != nil || !strings.HasPrefix(link, "/api/files/") {
		t.Fatalf("not a signed link: %q", link)
	}
	return env.Do(apitest.Request{Method: "GET", Path: link, Headers: headers})
}

// createRich creates a rich text topic as u and returns its id.
func createRich(t *testing.T, w *world, u *apitest.User, lesson int64, title string) int64 {
	t.Helper()
	return apitest.Must(w.env.UserClient(u).PostAdminTopics(t.Context(), client.PostAdminTopicsBody{Lesson: lesson, Title: title,
		Topicable: richClass, HTML: client.Ptr("<p>" + title + "</p>")}))(t).ID
}

// createPDF creates a PDF topic as u and returns the response.
func createPDF(t *testing.T, w *world, u *apitest.User, lesson int64) *apitest.Response {
	t.Helper()
	body, ct := multipartBody(t, text("lesson", id(lesson)), text("title", "Reading"), text("topicable", pdfClass),
		file("file", "notes.pdf", pdfData))
	return send(t, w.env, 201, "POST", "/api/admin/topics", u, body, ct)
}
