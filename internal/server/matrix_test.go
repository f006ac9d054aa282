package server_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/httpx"
)

// Who may get a 2xx from each route. Every other caller must not. A token
// of another tenant is refused, so "other-admin" is treated as anonymous
// and may only succeed where anonymous callers may.
const (
	anyone = "anon student tutor admin"
	users  = "student tutor admin"
	admins = "admin"
	// authors are the roles that create and manage courses of their own.
	authors = "tutor admin"
)

var matrix = map[string]string{
	"GET /api/health":                        anyone,
	"GET /api/healthcheck":                   anyone,
	"GET /api/name":                          anyone,
	"GET /api/events":                        anyone,
	"GET /api/meta":                          anyone,
	"GET /api/config":                        anyone,
	"POST /api/admin/config":                 admins,
	"POST /api/auth/login":                   anyone,
	"GET /api/auth/refresh":                  users,
	"POST /api/auth/logout":                  users,
	"POST /api/auth/register":                anyone,
	"GET /api/auth/registerable-groups":      anyone,
	"POST /api/auth/password/forgot":         anyone,
	"POST /api/auth/password/reset":          anyone,
	"GET /api/auth/email/verify/{id}/{hash}": "",
	"POST /api/auth/email/resend":            users,
	// Social login is public, but succeeds only with a configured provider
	// and its sealed state or hand-off (internal/social tests it against a
	// real OpenID provider): every caller gets 404 or 401 here.
	"GET /api/auth/social/{provider}":          "",
	"GET /api/auth/social/{provider}/callback": "",
	"POST /api/auth/social/complete/{token}":   "",
	"POST /api/admin/auth/impersonate":         admins,
	"GET /api/auth/tokens":                     users,
	"POST /api/auth/tokens":                    users,
	// A signed access token has no current scoped token (404); the ids
	// the matrix sends name no token.
	"GET /api/auth/tokens/current":                         "",
	"DELETE /api/auth/tokens/{id}":                         "",
	"GET /api/admin/tokens":                                admins,
	"DELETE /api/admin/tokens/{id}":                        "",
	"GET /api/admin/tokens/{id}/audit":                     "",
	"GET /api/admin/agent-audit":                           admins,
	"GET /api/profile/me":                                  users,
	"PUT /api/profile/me":                                  users,
	"PUT /api/profile/me-auth":                             users,
	"PUT /api/profile/password":                            users,
	"PUT /api/profile/interests":                           users,
	"GET /api/profile/settings":                            users,
	"PUT /api/profile/settings":                            users,
	"POST /api/profile/upload-avatar":                      users,
	"DELETE /api/profile/delete-avatar":                    users,
	"DELETE /api/profile":                                  users,
	"POST /api/profile/delete/init":                        users,
	"GET /api/profile/delete/{userId}/{token}":             "",
	"GET /api/admin/users":                                 admins,
	"POST /api/admin/users":                                admins,
	"GET /api/admin/users/{id}":                            admins,
	"PATCH /api/admin/users/{id}":                          admins,
	"PUT /api/admin/users/{id}":                            admins,
	"DELETE /api/admin/users/{id}":                         admins,
	"POST /api/admin/users/{id}/avatar":                    admins,
	"DELETE /api/admin/users/{id}/avatar":                  admins,
	"GET /api/admin/users/{id}/settings":                   admins,
	"PATCH /api/admin/users/{id}/settings":                 admins,
	"PUT /api/admin/users/{id}/settings":                   admins,
	"GET /api/admin/users/{id}/interests":                  admins,
	"PUT /api/admin/users/{id}/interests":                  admins,
	"POST /api/admin/users/{id}/interests":                 admins,
	"DELETE /api/admin/users/{id}/interests/{interest_id}": admins,
	"GET /api/admin/user-groups":                           admins,
	"GET /api/admin/user-groups/tree":                      admins,
	"GET /api/admin/user-groups/users":                     admins,
	"POST /api/admin/user-groups":                          admins,
	"GET /api/admin/user-groups/{id}":                      admins,
	"PUT /api/admin/user-groups/{id}":                      admins,
	"PATCH /api/admin/user-groups/{id}":                    admins,
	"DELETE /api/admin/user-groups/{id}":                   admins,
	"POST /api/admin/user-groups/{id}/members":             admins,
	"DELETE /api/admin/user-groups/{id}/members/{user_id}": admins,
	"GET /api/notifications":                               users,
	"GET /api/notifications/events":                        users,
	"POST /api/notifications/{notification}/read":          users,
	"POST /api/notifications/read-all":                     users,
	"GET /api/admin/notifications":                         admins,
	"GET /api/admin/notifications/all":                     admins,
	"GET /api/admin/notifications/{user}":                  admins,
	"GET /api/admin/notifications/events":                  admins,
	"POST /api/admin/notifications/{notification}/read":    admins,
	"POST /api/admin/notifications/read-all":               admins,
	"GET /api/courses/{course}/program":                    anyone,
	"GET /api/courses/{course}/preview/{topic_id}":         anyone,
	"GET /api/courses/progress":                            users,
	"GET /api/courses/progress/paginated":                  users,
	"GET /api/courses/progress/{course_id}":                users,
	"PATCH /api/courses/progress/{course_id}":              users,
	"PUT /api/courses/progress/{topic_id}/ping":            users,
	"POST /api/courses/progress/{topic_id}/h5p":            users,
	"POST /api/courses/progress/{topic_id}/h5p/grant":      users,
	// Course authoring: tutors may create and list (their own courses);
	// the matrix's course and lesson are the admin's, so only admins may
	// act on them.
	"GET /api/admin/courses":                      authors,
	"POST /api/admin/courses":                     authors,
	"GET /api/admin/courses/create":               authors,
	"GET /api/admin/courses/{id}":                 admins,
	"GET /api/admin/courses/{id}/edit":            admins,
	"PUT /api/admin/courses/{id}":                 admins,
	"PATCH /api/admin/courses/{id}":               admins,
	"DELETE /api/admin/courses/{id}":              admins,
	"POST /api/admin/courses/{id}":                admins,
	"POST /api/admin/courses/sort":                admins,
	"GET /api/admin/courses/{course}/program":     admins,
	"GET /api/admin/courses/search/tags":          authors,
	"GET /api/admin/courses/search/{category_id}": authors,
	"GET /api/admin/courses/users/assignable":     authors,
	"GET /api/admin/courses/{id}/access":          admins,
	"POST /api/admin/courses/{id}/access":         admins,
	"POST /api/admin/courses/{id}/access/remove":  admins,
	// The gradebook (internal/reports tests each role on a course a tutor
	// authors); the matrix's course is the admin's, and the user id it
	// sends is no learner of it.
	"GET /api/admin/courses/{id}/progress":                             admins,
	"GET /api/admin/courses/{id}/progress/summary":                     admins,
	"GET /api/admin/courses/{id}/progress/export":                      admins,
	"GET /api/admin/courses/{id}/progress/{user_id}":                   "",
	"GET /api/admin/courses/{id}/progress/{user_id}/export":            "",
	"GET /api/admin/courses/{id}/progress/{user_id}/topics/{topic_id}": "",
	"GET /api/admin/lessons":                                           authors,
	"POST /api/admin/lessons":                                          authors,
	"GET /api/admin/lessons/create":                                    authors,
	"GET /api/admin/lessons/{id}":                                      admins,
	"GET /api/admin/lessons/{id}/edit":                                 admins,
	"PUT /api/admin/lessons/{id}":                                      admins,
	"PATCH /api/admin/lessons/{id}":                                    admins,
	"DELETE /api/admin/lessons/{id}":                                   admins,
	"POST /api/admin/lessons/{id}/clone":                               admins,
	"POST /api/admin/tutors/{id}/assign/{course}":                      admins,
	"POST /api/admin/tutors/{id}/unassign/{course}":                    admins,
	"GET /api/courses":                                                 anyone,
	"GET /api/courses/{course}":                                        anyone,
	"GET /api/courses/authored":                                        users,
	"GET /api/tutors":                                                  anyone,
	"GET /api/tutors/{id}":                                             anyone,
	"GET /api/tags/uniqueTags":                                         anyone,
	// Topics: the matrix's topic is in the admin's course, so only admins
	// may act on it; tutors list their own courses' topics and the types.
	"GET /api/admin/topics":            authors,
	"GET /api/admin/topics/{id}":       admins,
	"GET /api/admin/topics/types":      authors,
	"GET /api/admin/layout/components": authors,
	"GET /api/admin/topics/create":     authors,
	"GET /api/admin/topics/{id}/edit":  admins,
	"POST /api/admin/topics":           admins,
	"PUT /api/admin/topics/{id}":       admins,
	"PATCH /api/admin/topics/{id}":     admins,
	"POST /api/admin/topics/{id}":      admins,
	"DELETE /api/admin/topics/{id}":    admins,
	// Media: awaiting a video's processing is for who may edit its topic.
	"GET /api/admin/operations/{operation}":                           admins,
	"POST /api/admin/topics/{id}/clone":                               admins,
	"GET /api/admin/topics/{topic_id}/resources":                      admins,
	"POST /api/admin/topics/{topic_id}/resources/":                    admins,
	"POST /api/admin/topics/{topic_id}/resources":                     admins,
	"PATCH /api/admin/topics/{topic_id}/resources/{resource_id}":      admins,
	"DELETE /api/admin/topics/{topic_id}/resources/{resource_id}":     admins,
	"POST /api/topics/{topic}/project":                                admins,
	"POST /api/topics/{topic}/practice/check":                         admins,
	"GET /api/admin/topics/{topic}/project/submissions":               admins,
	"GET /api/admin/topics/{topic}/project/submissions/{id}/download": admins,
	// Quizzes: the matrix's quiz is in the admin's course and its attempt
	// is the admin's; every learner lists their own attempts.
	"POST /api/quiz-attempts":                                 admins,
	"GET /api/quiz-attempts":                                  users,
	"GET /api/quiz-attempts/{id}":                             admins,
	"POST /api/quiz-attempts/{id}/answer":                     admins,
	"POST /api/quiz-attempts/{id}/end":                        admins,
	"GET /api/admin/topics/{topic_id}/quiz-attempts":          admins,
	"GET /api/admin/quiz-attempts/{id}":                       admins,
	"POST /api/admin/quiz-attempts/{id}/grade":                admins,
	"POST /api/admin/gift-questions":                          admins,
	"GET /api/admin/topics/{topic_id}/gift-questions":         admins,
	"PUT /api/admin/topics/{topic_id}/gift-questions/order":   admins,
	"PUT /api/admin/topics/{topic_id}/gift-questions/{id}":    admins,
	"DELETE /api/admin/topics/{topic_id}/gift-questions/{id}": admins,
	// SCORM: authors upload packages; every user lists their own tracks.
	// The matrix has no SCO, so nobody launches one here; the tracking
	// routes, the player and package files need a tracking token or a
	// signed link (internal/kinds/scorm tests them per role and token).
	"POST /api/admin/scorm/upload":                                  authors,
	"DELETE /api/admin/scorm/{package}":                             authors,
	"GET /api/courses/{course}/scorm":                               users,
	"POST /api/scorm/launch/{sco}":                                  "",
	"GET /api/scorm/tracks/{sco}":                                   "",
	"POST /api/scorm/tracks/{sco}/commit":                           "",
	"POST /api/scorm/tracks/{sco}/navigate":                         "",
	"POST /api/scorm/player/{sco}":                                  "",
	"GET /api/scorm/content/{package}/{expires}/{signature}/{path}": "",
	"GET /api/scorm/runtime/{file}":                                 anyone,
	// Interactive: authors upload packages (the matrix's package id names
	// none); the matrix's topic is no interactive topic, so the admin's
	// progress is refused too; play links need a valid grant; anyone may
	// send a CSP report.
	"POST /api/admin/interactive":                  authors,
	"GET /api/admin/interactive/{id}":              authors,
	"GET /api/admin/topics/{topic_id}/csp-reports": admins,
	"POST /api/interactive/progress/{topic}":       admins,
	"GET /api/interactive/play/{grant}/{path}":     "",
	"GET /api/interactive/play/{grant}/":           "",
	"POST /api/csp-report":                         anyone,
	// LiaScript: authors upload (plausibleBody's markdown) and preview
	// (the matrix's id names no course); the matrix's topic is no
	// LiaScript topic.
	"POST /api/admin/liascript":                   authors,
	"POST /api/liascript/{id}/preview":            authors,
	"POST /api/liascript/progress/{topic}":        admins,
	"GET /api/liascript/play/{grant}/{path}":      "",
	"GET /api/liascript/play/{grant}/":            "",
	"GET /api/liascript/runtime/{version}/{file}": anyone,
	// Signed links need no token; without a valid signature nobody gets one.
	"GET /api/files/{key}": "",
	// Message templates (internal/notify): the matrix's {id} names no
	// template of the tenant, so only the list, create and preview succeed.
	"GET /api/admin/message-templates":                       admins,
	"POST /api/admin/message-templates":                      admins,
	"POST /api/admin/message-templates/preview":              admins,
	"GET /api/admin/message-templates/{id}":                  "",
	"PUT /api/admin/message-templates/{id}":                  "",
	"DELETE /api/admin/message-templates/{id}":               "",
	"POST /api/admin/message-templates/{id}/restore-default": "",
	// Certificates (internal/certificates): the {id} names none.
	"GET /api/certificates":                 users,
	"GET /api/admin/certificates":           admins,
	"GET /api/admin/deliveries":             admins,
	"POST /api/admin/deliveries/retry":      admins,
	"POST /api/admin/deliveries/{id}/retry": admins,
	// Inbound webhooks answer 2xx only to a signed call; connections
	// the matrix names do not exist, and a create needs topics.
	"POST /api/jitsi/recorded-video":                        "",
	"POST /api/living-course/webhooks/{id}":                 "",
	"GET /api/admin/living-course/connections":              authors,
	"POST /api/admin/living-course/connections":             "",
	"POST /api/admin/living-course/connections/{id}/secret": "",
	"DELETE /api/admin/living-course/connections/{id}":      "",
	"GET /api/admin/webhooks":                               admins,
	"POST /api/admin/webhooks":                              admins,
	"GET /api/admin/webhooks/{id}":                          admins,
	"PATCH /api/admin/webhooks/{id}":                        admins,
	"DELETE /api/admin/webhooks/{id}":                       admins,
	"GET /api/admin/webhooks/{id}/deliveries":               admins,
	"POST /api/admin/certificates/{id}/regenerate":          "",
	// The image renderer needs a valid signed link, which the matrix lacks.
	"GET /api/img":  "",
	"POST /api/img": "",
	// Demo mode is off in the matrix's server, and its tenant is no demo
	// tenant: nobody gets a 2xx (internal/demo tests demo mode itself).
	// The platform API answers 404 on a tenant's host, where the matrix
	// runs; internal/platformadmin tests its roles on the platform host.
	"GET /api/platform/tenants":                "",
	"POST /api/platform/tenants":               "",
	"GET /api/platform/tenants/{id}":           "",
	"PATCH /api/platform/tenants/{id}":         "",
	"DELETE /api/platform/tenants/{id}":        "",
	"POST /api/platform/tenants/{id}/suspend":  "",
	"POST /api/platform/tenants/{id}/resume":   "",
	"POST /api/platform/tenants/{id}/deletion": "",
	"POST /api/demo/login":                     "",
	"GET /api/demo":                            "",
	// The H5P service's REST routes (its own permissions, internal/access).
	// Contents are authored by tutors and admins; the matrix's content id
	// names no content, so who may read one is checked, not what they get.
	"GET /h5p/health":                 anyone,
	"GET /h5p/contents":               authors,
	"POST /h5p/contents":              authors,
	"POST /h5p/contents/upload":       authors,
	"GET /h5p/contents/{id}":          anyone,
	"PATCH /h5p/contents/{id}":        authors,
	"DELETE /h5p/contents/{id}":       authors,
	"GET /h5p/contents/{id}/download": anyone,
	"GET /h5p/libraries":              authors,
	"POST /h5p/libraries":             admins,
	"GET /h5p/libraries/{uber}":       authors,
	"PATCH /h5p/libraries/{uber}":     admins,
	"DELETE /h5p/libraries/{uber}":    admins,
	// Only the platform's internal token deletes orphaned files.
	"POST /h5p/contents/orphans/delete": "",
	// The player's and editor's routes: the matrix's content id names no
	// content and its state and result requests name none either, so
	// nobody gets a 2xx (internal/h5p tests who may play, edit and save).
	"GET /h5p/contents/{id}/play":                                     "",
	"GET /h5p/contents/{id}/edit":                                     "",
	"POST /h5p/contents/{id}/edit-grant":                              "",
	"GET /h5p/params/{id}":                                            "",
	"GET /h5p/contentUserData/{contentId}/{dataType}/{subContentId}":  "",
	"POST /h5p/contentUserData/{contentId}/{dataType}/{subContentId}": "",
	"GET /h5p/finishedData":                                           "",
	"POST /h5p/finishedData":                                          "",
	"GET /h5p/embed/play/{id}":                                        "",
	"GET /h5p/embed/edit/{id}":                                        "",
	"GET /h5p/content-type-cache/update":                              authors,
	"POST /h5p/content-type-cache/update":                             admins,
	// The device login: anyone may start one; the matrix's device code
	// and user code name no request.
	"POST /api/auth/device/code":                         anyone,
	"POST /api/auth/device/token":                        "",
	"GET /api/auth/device/requests/{user_code}":          "",
	"POST /api/auth/device/requests/{user_code}/approve": "",
	"POST /api/auth/device/requests/{user_code}/deny":    "",
	// cmi5: authors upload packages; the matrix's topic is no cmi5 topic,
	// its content link is not valid, so nobody launches. The fetch URL
	// answers anyone 200, an auth token or (here) cmi5's error object
	// (section 8.2.1). The LRS is an admin's (or a launch's, tested in
	// internal/kinds/cmi5), its about page public.
	"POST /api/admin/cmi5":          authors,
	"POST /api/cmi5/launch/{topic}": "",
	// Waiving and abandoning need a cmi5 topic too; internal/kinds/cmi5
	// tests a learner refused.
	"POST /api/cmi5/waive/{topic}":                   "",
	"POST /api/cmi5/abandon/{topic}":                 "",
	"POST /api/cmi5/fetch":                           anyone,
	"GET /api/cmi5/content/{package}/{token}/{path}": "",
	"GET /api/xapi/about":                            anyone,
	"GET /api/xapi/statements":                       admins,
	"PUT /api/xapi/statements":                       "",
	"POST /api/xapi/statements":                      "",
	"GET /api/xapi/activities/state":                 "",
	"PUT /api/xapi/activities/state":                 "",
	"POST /api/xapi/activities/state":                "",
	"DELETE /api/xapi/activities/state":              "",
	"GET /api/xapi/activities/profile":               "",
	"PUT /api/xapi/activities/profile":               "",
	"POST /api/xapi/activities/profile":              "",
	"DELETE /api/xapi/activities/profile":            "",
	"GET /api/xapi/agents/profile":                   "",
	"PUT /api/xapi/agents/profile":                   "",
	"POST /api/xapi/agents/profile":                  "",
	"DELETE /api/xapi/agents/profile":                "",
	"GET /api/xapi/activities":                       "",
	"GET /api/xapi/agents":                           "",
	// LTI 1.3: the protocol routes need a registered platform and its
	// signed messages (internal/kinds/lti tests them); the key set is public.
	"GET /api/lti/tool/login":                  "",
	"POST /api/lti/tool/login":                 "",
	"POST /api/lti/tool/launch":                "",
	"POST /api/lti/tool/exchange":              "",
	"GET /api/lti/jwks":                        anyone,
	"GET /api/admin/lti/tool":                  admins,
	"GET /api/admin/lti/registrations":         admins,
	"POST /api/admin/lti/registrations":        "",
	"PUT /api/admin/lti/registrations/{id}":    "",
	"DELETE /api/admin/lti/registrations/{id}": "",
	// The matrix's topics launch no tool (404); internal/kinds/lti tests launches.
	"POST /api/lti/launches/{topic}":   "",
	"GET /api/lti/authorize":           "",
	"POST /api/lti/authorize":          "",
	"GET /api/admin/lti/platform":      admins,
	"GET /api/admin/lti/tools":         admins,
	"GET /api/admin/lti/tool-choices":  authors,
	"POST /api/admin/lti/tools":        "",
	"PUT /api/admin/lti/tools/{id}":    "",
	"DELETE /api/admin/lti/tools/{id}": "",
	// Deep linking needs a tool to answer (internal/kinds/lti tests the roles:
	// a student is refused the request; the return is the tool's signed
	// answer, checked in order).
	"POST /api/lti/deep-links":        "",
	"POST /api/lti/deep-links/return": "",
	// Tools' service tokens only (internal/kinds/lti tests them).
	"POST /api/lti/token":                                   "",
	"GET /api/lti/ags/{topic}/lineitems":                    "",
	"POST /api/lti/ags/{topic}/lineitems":                   "",
	"POST /api/lti/ags/{topic}/lineitems/{lineitem}/scores": "",
	"GET /api/lti/ags/{topic}/lineitems/{lineitem}":         "",
	"PUT /api/lti/ags/{topic}/lineitems/{lineitem}":         "",
	"DELETE /api/lti/ags/{topic}/lineitems/{lineitem}":      "",
	"GET /api/lti/ags/{topic}/lineitems/{lineitem}/results": "",
}

// TestRoleMatrix sends every route, as every caller who must not have it, a
// plausible request about real objects, and fails on any 2xx.
func TestRoleMatrix(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		routes := httpx.Routes(env.Server.API)
		for _, route := range routes {
			if _, ok := matrix[route]; !ok {
				t.Errorf("route %s is not in the role matrix", route)
			}
		}
		for route := range matrix {
			if !contains(routes, route) {
				t.Errorf("matrix names %s, which is not registered", route)
			}
		}
		w := newMatrixWorld(t, env)
		callers := []string{"anon", "student", "tutor", "admin", "other-admin"}
		for _, route := range routes {
			allowed := strings.Fields(matrix[route])
			for _, caller := range callers {
				who := caller
				if caller == "other-admin" {
					who = "anon"
				}
				if contains(allowed, who) {
					continue
				}
				req := w.request(t, route)
				if caller != "anon" {
					req.Token = env.As(caller).Token
				}
				res := env.Do(req)
				if res.Status >= 200 && res.Status < 300 {
					t.Errorf("%s answered %d to %s: %s", route, res.Status, caller, res.Body)
				}
				needsUser := matrix[route] != "" && !contains(allowed, "anon")
				if caller == "other-admin" && needsUser && res.Status != 401 {
					t.Errorf("%s answered %d to another tenant's token, want 401: %s", route, res.Status, res.Body)
				}
			}
		}
	})
}

// matrixWorld holds real objects of every kind (a user, a group, a
// notification, a category, a course, a lesson, topics) so that the
// matrices send each route a plausible request about them.
type matrixWorld struct {
	env       *apitest.Env
	target    *apitest.User
	groupID   string
	courseID  string
	lessonID  string
	category  string
	topicObjs topicObjects
	params    map[string]string
}

func newMatrixWorld(t *testing.T, env *apitest.Env) *matrixWorld {
	t.Helper()
	target := env.NewUser("student")
	ctx, admin := t.Context(), env.As("admin")
	adminClient := env.UserClient(admin)
	group := apitest.Must(adminClient.PostAdminUserGroups(ctx, client.CreateGroupInputBody{Name: "Matrix"}))(t)
	groupID := strconv.FormatInt(group.ID, 10)
	notification := waitNotification(t, env, target.Token)
	categoryID := insertCategory(t, env)
	course := apitest.Must(adminClient.PostAdminCourses(ctx, client.CourseBody{Title: "Matrix"}))(t).ID
	courseID := strconv.FormatInt(course, 10)
	lesson := apitest.Must(adminClient.PostAdminLessons(ctx, client.CreateLessonInputBody{Title: "Matrix", CourseID: course}))(t).ID
	lessonID := strconv.FormatInt(lesson, 10)
	topicObjs := matrixTopics(t, env, admin, lesson)
	params := map[string]string{
		"{user}": strconv.FormatInt(target.ID, 10), "{userId}": strconv.FormatInt(target.ID, 10),
		"{user_id}": strconv.FormatInt(target.ID, 10), "{notification}": notification,
		"{interest_id}": categoryID, "{token}": "x", "{hash}": "x",
		"{course}": courseID, "{course_id}": courseID, "{category_id}": categoryID,
	}
	for k, v := range topicObjs.params() {
		params[k] = v
	}
	// Media: the operation of a video topic in the admin's course.
	video := apitest.Must(adminClient.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "Matrix video",
		Topicable: `Lms\TopicTypes\Models\TopicContent\Video`, VideoSiteURL: client.Ptr("https://example.com/v.mp4")}))(t).ID
	params["{operation}"] = "video:" + strconv.FormatInt(video, 10)
	return &matrixWorld{env: env, target: target, groupID: groupID, courseID: courseID, lessonID: lessonID,
		category: categoryID, topicObjs: topicObjs, params: params}
}

// request is a plausible request of the route about the world's objects,
// without a token.
func (w *matrixWorld) request(t *testing.T, route string) apitest.Request {
	method, path, _ := strings.Cut(route, " ")
	id := strconv.FormatInt(w.target.ID, 10)
	switch {
	case strings.HasPrefix(path, "/api/admin/topics/") || isQuiz(route):
		id = w.topicObjs.id(path)
	case strings.HasPrefix(path, "/api/admin/user-groups/"):
		id = w.groupID
	case strings.HasPrefix(path, "/api/admin/courses/"):
		id = w.courseID
	case strings.HasPrefix(path, "/api/admin/lessons/"):
		id = w.lessonID
	}
	path = strings.ReplaceAll(path, "{id}", id)
	if isQuiz(route) {
		path = strings.ReplaceAll(path, "{topic_id}", w.topicObjs.quiz)
	}
	for k, v := range w.params {
		path = strings.ReplaceAll(path, k, v)
	}
	req := apitest.Request{Method: method, Path: path, Body: plausibleBody(method, route, w.target.ID, w.category)}
	if strings.HasPrefix(path, "/api/xapi/") {
		req.Headers = map[string]string{"X-Experience-API-Version": "1.0.3"}
	}
	if body, ctype, ok := w.topicObjs.body(t, method, route); ok {
		req.Body, req.Type = body, ctype
	}
	return req
}

// plausibleBody is a body that would succeed for an allowed caller, so a
// missing permission check shows as a 2xx instead of hiding behind a 422.
func plausibleBody(method, route string, userID int64, categoryID string) any {
	if method == "GET" || method == "DELETE" {
		return nil
	}
	cat, _ := strconv.Atoi(categoryID)
	return map[string]any{
		"config":           []map[string]any{{"key": "lms_auth.registration", "value": "enabled"}},
		"user_id":          userID,
		"name":             "Group",
		"email":            "matrix-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "@school.test",
		"password":         "matrix-password",
		"first_name":       "M",
		"last_name":        "X",
		"interests":        []int{cat},
		"is_active":        true,
		"roles":            []string{"student"},
		"current_password": "secret-password",
	}
}

func waitNotification(t *testing.T, env *apitest.Env, token string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		res := env.Do(apitest.Request{Method: "GET", Path: "/api/notifications", Token: token})
		if id := res.Number("data.0.id"); id > 0 {
			return strconv.Itoa(int(id))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no notification arrived for the target user")
	return ""
}

func insertCategory(t *testing.T, env *apitest.Env) string {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	var id int64
	now := env.Clock.Now()
	err := tenant.DB.QueryRowContext(context.Background(), `INSERT INTO categories (name, slug, created_at, updated_at)
		VALUES ($1, $2, $3, $3) RETURNING id`, "Matrix", "matrix", now).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(id, 10)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
