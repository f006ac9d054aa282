package server

import "github.com/lms-platform/lms/internal/tokens"

// scopePolicy is what each route asks of a scoped token, in one place:
// tokens.Enforce applies it to every API request made with one, and
// tokens.Describe writes it into the OpenAPI description (x-lms-scope).
// A route it does not name refuses scoped tokens, and TestScopePolicy
// fails until the route is given its rule here. The H5P service applies
// the same scopes through the permissions a token keeps (tokens.Scopes).
var scopePolicy = func() tokens.Policy {
	read := func(s string) tokens.Rule { return tokens.Needs(s + ":read") }
	write := func(s string) tokens.Rule { return tokens.Needs(s + ":write") }
	const (
		courses       = "courses"
		users         = "users"
		groups        = "groups"
		settings      = "settings"
		notifications = "notifications"
		progress      = "progress"
		profile       = "profile"
		h5p           = "h5p"
		tok           = "tokens"
		// del keeps the table-owners test from reading route keys as SQL.
		del = "DELETE"
	)
	return tokens.Policy{
		// General and harmless public routes.
		"GET /api/health":      tokens.AnyToken,
		"GET /api/healthcheck": tokens.AnyToken,
		"GET /api/name":        tokens.AnyToken,
		"GET /api/events":      tokens.AnyToken,
		"GET /api/meta":        tokens.AnyToken,
		// Signed links carry their own authority.
		"GET /api/files/{key}":   tokens.AnyToken,
		"GET /api/config":        read(settings),
		"POST /api/admin/config": write(settings),
		// Event deliveries and their dead letters: tenant operations.
		"GET /api/admin/deliveries":               read(settings),
		"POST /api/admin/deliveries/{id}/retry":   write(settings),
		"POST /api/admin/deliveries/retry":        write(settings),
		"GET /api/admin/webhooks":                 read(settings),
		"POST /api/admin/webhooks":                write(settings),
		"GET /api/admin/webhooks/{id}":            read(settings),
		"PATCH /api/admin/webhooks/{id}":          write(settings),
		del + " /api/admin/webhooks/{id}":         write(settings),
		"GET /api/admin/webhooks/{id}/deliveries": read(settings),

		// Message templates are tenant configuration, as settings are;
		// a preview renders without saving, so reading suffices.
		"GET /api/admin/message-templates":                       read(settings),
		"POST /api/admin/message-templates":                      write(settings),
		"POST /api/admin/message-templates/preview":              read(settings),
		"GET /api/admin/message-templates/{id}":                  read(settings),
		"PUT /api/admin/message-templates/{id}":                  write(settings),
		del + " /api/admin/message-templates/{id}":               write(settings),
		"POST /api/admin/message-templates/{id}/restore-default": write(settings),
		// Certificates are the record of a finished course: the caller's
		// own are progress; every learner's (admins) are users' records,
		// which progress:read ("the user's own progress") never opens.
		"GET /api/certificates":                        read(progress),
		"GET /api/admin/certificates":                  read(users),
		"POST /api/admin/certificates/{id}/regenerate": write(users),
		// The image renderer: the signed link it names is its authority.
		"GET /api/img":  tokens.AnyToken,
		"POST /api/img": tokens.AnyToken,

		// Sessions, credentials and accounts: never with a scoped token.
		"POST /api/auth/login":                     tokens.NoTokens,
		"GET /api/auth/refresh":                    tokens.NoTokens,
		"POST /api/auth/logout":                    tokens.NoTokens,
		"POST /api/auth/register":                  tokens.NoTokens,
		"GET /api/auth/registerable-groups":        tokens.NoTokens,
		"POST /api/auth/password/forgot":           tokens.NoTokens,
		"POST /api/auth/password/reset":            tokens.NoTokens,
		"GET /api/auth/email/verify/{id}/{hash}":   tokens.NoTokens,
		"POST /api/auth/email/resend":              tokens.NoTokens,
		"POST /api/admin/auth/impersonate":         tokens.NoTokens,
		"PUT /api/profile/me-auth":                 tokens.NoTokens,
		"PUT /api/profile/password":                tokens.NoTokens,
		del + " /api/profile":                      tokens.NoTokens,
		"POST /api/profile/delete/init":            tokens.NoTokens,
		"GET /api/profile/delete/{userId}/{token}": tokens.NoTokens,
		"POST /api/demo/login":                     tokens.NoTokens,
		"GET /api/demo":                            tokens.NoTokens,

		// Scoped tokens themselves.
		"GET /api/auth/tokens":             read(tok),
		"POST /api/auth/tokens":            write(tok),
		"GET /api/auth/tokens/current":     tokens.AnyToken,
		del + " /api/auth/tokens/{id}":     write(tok),
		"GET /api/admin/tokens":            tokens.Needs(tokens.TokensManage),
		del + " /api/admin/tokens/{id}":    tokens.Needs(tokens.TokensManage),
		"GET /api/admin/tokens/{id}/audit": tokens.Needs(tokens.TokensManage),
		"GET /api/admin/agent-audit":       tokens.Needs(tokens.TokensManage),

		// Device login: starting and polling are a sign-in, never made
		// with a token; approving creates a token of the caller, so it
		// needs what creating one needs (and stays within its scopes).
		"POST /api/auth/device/code":                         tokens.NoTokens,
		"POST /api/auth/device/token":                        tokens.NoTokens,
		"GET /api/auth/device/requests/{user_code}":          read(tok),
		"POST /api/auth/device/requests/{user_code}/approve": write(tok),
		"POST /api/auth/device/requests/{user_code}/deny":    write(tok),

		// The caller's own profile: "who am I" for any token, so that the
		// H5P service can ask it about every token; its permissions are
		// the ones the token keeps.
		"GET /api/profile/me":               tokens.AnyToken,
		"PUT /api/profile/me":               write(profile),
		"PUT /api/profile/interests":        write(profile),
		"GET /api/profile/settings":         read(profile),
		"PUT /api/profile/settings":         write(profile),
		"POST /api/profile/upload-avatar":   write(profile),
		del + " /api/profile/delete-avatar": write(profile),

		"GET /api/admin/users":                                 read(users),
		"POST /api/admin/users":                                write(users),
		"GET /api/admin/users/{id}":                            read(users),
		"PATCH /api/admin/users/{id}":                          write(users),
		"PUT /api/admin/users/{id}":                            write(users),
		del + " /api/admin/users/{id}":                         write(users),
		"POST /api/admin/users/{id}/avatar":                    write(users),
		del + " /api/admin/users/{id}/avatar":                  write(users),
		"GET /api/admin/users/{id}/settings":                   read(users),
		"PATCH /api/admin/users/{id}/settings":                 write(users),
		"PUT /api/admin/users/{id}/settings":                   write(users),
		"GET /api/admin/users/{id}/interests":                  read(users),
		"PUT /api/admin/users/{id}/interests":                  write(users),
		"POST /api/admin/users/{id}/interests":                 write(users),
		del + " /api/admin/users/{id}/interests/{interest_id}": write(users),

		"GET /api/admin/user-groups":                           read(groups),
		"GET /api/admin/user-groups/tree":                      read(groups),
		"GET /api/admin/user-groups/users":                     read(groups),
		"POST /api/admin/user-groups":                          write(groups),
		"GET /api/admin/user-groups/{id}":                      read(groups),
		"PUT /api/admin/user-groups/{id}":                      write(groups),
		"PATCH /api/admin/user-groups/{id}":                    write(groups),
		del + " /api/admin/user-groups/{id}":                   write(groups),
		"POST /api/admin/user-groups/{id}/members":             write(groups),
		del + " /api/admin/user-groups/{id}/members/{user_id}": write(groups),

		"GET /api/notifications":                      read(notifications),
		"GET /api/notifications/events":               read(notifications),
		"POST /api/notifications/{notification}/read": write(notifications),
		"POST /api/notifications/read-all":            write(notifications),
		// The caller's own notifications are notifications:read; every
		// user's (/all, /{user}) are users' records: users:read, which
		// also keeps the permission to list them.
		"GET /api/admin/notifications":                      read(notifications),
		"GET /api/admin/notifications/all":                  read(users),
		"GET /api/admin/notifications/{user}":               read(users),
		"GET /api/admin/notifications/events":               read(notifications),
		"POST /api/admin/notifications/{notification}/read": write(notifications),
		"POST /api/admin/notifications/read-all":            write(notifications),

		"GET /api/courses/progress":                       read(progress),
		"GET /api/courses/progress/paginated":             read(progress),
		"GET /api/courses/progress/{course_id}":           read(progress),
		"PATCH /api/courses/progress/{course_id}":         write(progress),
		"PUT /api/courses/progress/{topic_id}/ping":       write(progress),
		"POST /api/courses/progress/{topic_id}/h5p":       write(progress),
		"POST /api/courses/progress/{topic_id}/h5p/grant": write(progress),
		"POST /api/topics/{topic}/project":                write(progress),
		"POST /api/topics/{topic}/practice/check":         write(progress),
		// Quiz attempts are the learner's progress.
		"POST /api/quiz-attempts":             write(progress),
		"GET /api/quiz-attempts":              read(progress),
		"GET /api/quiz-attempts/{id}":         read(progress),
		"POST /api/quiz-attempts/{id}/answer": write(progress),
		"POST /api/quiz-attempts/{id}/end":    write(progress),
		// SCORM: uploads author courses; launches and track lists are the
		// learner's progress; the tracking routes, the player page and
		// the package files carry their own authority (tracking token,
		// signed links), like signed file links.
		"POST /api/admin/scorm/upload":                                  write(courses),
		"DELETE /api/admin/scorm/{package}":                             write(courses),
		"GET /api/courses/{course}/scorm":                               read(progress),
		"POST /api/scorm/launch/{sco}":                                  write(progress),
		"GET /api/scorm/tracks/{sco}":                                   tokens.AnyToken,
		"POST /api/scorm/tracks/{sco}/commit":                           tokens.AnyToken,
		"POST /api/scorm/tracks/{sco}/navigate":                         tokens.AnyToken,
		"POST /api/scorm/player/{sco}":                                  tokens.AnyToken,
		"GET /api/scorm/content/{package}/{expires}/{signature}/{path}": tokens.AnyToken,
		"GET /api/scorm/runtime/{file}":                                 tokens.AnyToken,

		// Courses, lessons, topics, uploads and programs: courses:read for
		// reads, courses:write for writes (the interface's Topics section).
		"GET /api/courses":                                                read(courses),
		"GET /api/courses/{course}":                                       read(courses),
		"GET /api/courses/{course}/program":                               read(courses),
		"GET /api/courses/{course}/preview/{topic_id}":                    read(courses),
		"GET /api/courses/authored":                                       read(courses),
		"GET /api/tutors":                                                 read(courses),
		"GET /api/tutors/{id}":                                            read(courses),
		"GET /api/tags/uniqueTags":                                        read(courses),
		"GET /api/admin/courses":                                          read(courses),
		"POST /api/admin/courses":                                         write(courses),
		"GET /api/admin/courses/create":                                   read(courses),
		"GET /api/admin/courses/{id}":                                     read(courses),
		"GET /api/admin/courses/{id}/edit":                                read(courses),
		"PUT /api/admin/courses/{id}":                                     write(courses),
		"PATCH /api/admin/courses/{id}":                                   write(courses),
		del + " /api/admin/courses/{id}":                                  write(courses),
		"POST /api/admin/courses/{id}":                                    write(courses),
		"POST /api/admin/courses/sort":                                    write(courses),
		"GET /api/admin/courses/{course}/program":                         read(courses),
		"GET /api/admin/courses/search/tags":                              read(courses),
		"GET /api/admin/courses/search/{category_id}":                     read(courses),
		"GET /api/admin/courses/users/assignable":                         read(courses),
		"GET /api/admin/courses/{id}/access":                              read(courses),
		"POST /api/admin/courses/{id}/access":                             write(courses),
		"POST /api/admin/courses/{id}/access/remove":                      write(courses),
		"GET /api/admin/lessons":                                          read(courses),
		"POST /api/admin/lessons":                                         write(courses),
		"GET /api/admin/lessons/create":                                   read(courses),
		"GET /api/admin/lessons/{id}":                                     read(courses),
		"GET /api/admin/lessons/{id}/edit":                                read(courses),
		"PUT /api/admin/lessons/{id}":                                     write(courses),
		"PATCH /api/admin/lessons/{id}":                                   write(courses),
		del + " /api/admin/lessons/{id}":                                  write(courses),
		"POST /api/admin/lessons/{id}/clone":                              write(courses),
		"POST /api/admin/tutors/{id}/assign/{course}":                     write(courses),
		"POST /api/admin/tutors/{id}/unassign/{course}":                   write(courses),
		"GET /api/admin/topics":                                           read(courses),
		"GET /api/admin/topics/{id}":                                      read(courses),
		"GET /api/admin/topics/types":                                     read(courses),
		"GET /api/admin/layout/components":                                read(courses),
		"GET /api/admin/topics/create":                                    read(courses),
		"GET /api/admin/topics/{id}/edit":                                 read(courses),
		"POST /api/admin/topics":                                          write(courses),
		"PUT /api/admin/topics/{id}":                                      write(courses),
		"PATCH /api/admin/topics/{id}":                                    write(courses),
		"POST /api/admin/topics/{id}":                                     write(courses),
		del + " /api/admin/topics/{id}":                                   write(courses),
		"GET /api/admin/operations/{operation}":                           read(courses),
		"POST /api/admin/topics/{id}/clone":                               write(courses),
		"GET /api/admin/topics/{topic_id}/resources":                      read(courses),
		"POST /api/admin/topics/{topic_id}/resources/":                    write(courses),
		"POST /api/admin/topics/{topic_id}/resources":                     write(courses),
		"PATCH /api/admin/topics/{topic_id}/resources/{resource_id}":      write(courses),
		del + " /api/admin/topics/{topic_id}/resources/{resource_id}":     write(courses),
		"GET /api/admin/topics/{topic}/project/submissions":               read(courses),
		"GET /api/admin/topics/{topic}/project/submissions/{id}/download": read(courses),
		"GET /api/admin/topics/{topic_id}/quiz-attempts":                  read(courses),
		"GET /api/admin/quiz-attempts/{id}":                               read(courses),
		"POST /api/admin/quiz-attempts/{id}/grade":                        write(courses),
		"POST /api/admin/gift-questions":                                  write(courses),
		"GET /api/admin/topics/{topic_id}/gift-questions":                 read(courses),
		"PUT /api/admin/topics/{topic_id}/gift-questions/order":           write(courses),
		"PUT /api/admin/topics/{topic_id}/gift-questions/{id}":            write(courses),
		del + " /api/admin/topics/{topic_id}/gift-questions/{id}":         write(courses),
		// Interactive packages are course material; an app's reports are
		// the learner's progress; played files and CSP reports carry no
		// authority of a token (signed links; browsers' reports).
		"POST /api/admin/interactive":                  write(courses),
		"GET /api/admin/interactive/{id}":              read(courses),
		"GET /api/admin/topics/{topic_id}/csp-reports": read(courses),
		"POST /api/interactive/progress/{topic}":       write(progress),
		"GET /api/interactive/play/{grant}/{path}":     tokens.AnyToken,
		"GET /api/interactive/play/{grant}/":           tokens.AnyToken,
		"POST /api/csp-report":                         tokens.AnyToken,
		// LiaScript courses are course material; their progress is the
		// learner's.
		"POST /api/admin/liascript":                   write(courses),
		"POST /api/liascript/{id}/preview":            read(courses),
		"POST /api/liascript/progress/{topic}":        write(progress),
		"GET /api/liascript/play/{grant}/{path}":      tokens.AnyToken,
		"GET /api/liascript/play/{grant}/":            tokens.AnyToken,
		"GET /api/liascript/runtime/{version}/{file}": tokens.AnyToken,

		// The H5P service: the token's user with the H5P permissions its
		// scopes keep (h5p:read lists and reads, h5p:write changes).
		"GET /h5p/health":                   tokens.AnyToken,
		"GET /h5p/contents":                 read(h5p),
		"POST /h5p/contents":                write(h5p),
		"POST /h5p/contents/upload":         write(h5p),
		"GET /h5p/contents/{id}":            read(h5p),
		"PATCH /h5p/contents/{id}":          write(h5p),
		del + " /h5p/contents/{id}":         write(h5p),
		"GET /h5p/contents/{id}/download":   read(h5p),
		"GET /h5p/libraries":                read(h5p),
		"POST /h5p/libraries":               write(h5p),
		"GET /h5p/libraries/{uber}":         read(h5p),
		"PATCH /h5p/libraries/{uber}":       write(h5p),
		del + " /h5p/libraries/{uber}":      write(h5p),
		"POST /h5p/contents/orphans/delete": tokens.NoTokens,

		// cmi5: the package upload is authoring, a launch is the learner's
		// progress; the fetch URL and the package files carry their own
		// authority.
		"POST /api/admin/cmi5":                           write(courses),
		"POST /api/cmi5/launch/{topic}":                  write(progress),
		"POST /api/cmi5/waive/{topic}":                   write(courses),
		"POST /api/cmi5/fetch":                           tokens.AnyToken,
		"GET /api/cmi5/content/{package}/{token}/{path}": tokens.AnyToken,
		// The LRS has its own credentials (a launch's auth token, an
		// admin's session); a scoped token never reaches it.
		"GET /api/xapi/about":                 tokens.AnyToken,
		"GET /api/xapi/statements":            tokens.NoTokens,
		"PUT /api/xapi/statements":            tokens.NoTokens,
		"POST /api/xapi/statements":           tokens.NoTokens,
		"GET /api/xapi/activities/state":      tokens.NoTokens,
		"PUT /api/xapi/activities/state":      tokens.NoTokens,
		"POST /api/xapi/activities/state":     tokens.NoTokens,
		del + " /api/xapi/activities/state":   tokens.NoTokens,
		"GET /api/xapi/activities/profile":    tokens.NoTokens,
		"PUT /api/xapi/activities/profile":    tokens.NoTokens,
		"POST /api/xapi/activities/profile":   tokens.NoTokens,
		del + " /api/xapi/activities/profile": tokens.NoTokens,
		"GET /api/xapi/agents/profile":        tokens.NoTokens,
		"PUT /api/xapi/agents/profile":        tokens.NoTokens,
		"POST /api/xapi/agents/profile":       tokens.NoTokens,
		del + " /api/xapi/agents/profile":     tokens.NoTokens,
		"GET /api/xapi/activities":            tokens.NoTokens,
		"GET /api/xapi/agents":                tokens.NoTokens,
		// LTI 1.3: the protocol routes are sign-ins of browsers sent by
		// another platform, never made with a token; registrations are
		// settings of the tenant.
		"GET /api/lti/tool/login":                  tokens.NoTokens,
		"POST /api/lti/tool/login":                 tokens.NoTokens,
		"POST /api/lti/tool/launch":                tokens.NoTokens,
		"POST /api/lti/tool/exchange":              tokens.NoTokens,
		"GET /api/lti/jwks":                        tokens.AnyToken,
		"GET /api/admin/lti/tool":                  read(settings),
		"GET /api/admin/lti/registrations":         read(settings),
		"POST /api/admin/lti/registrations":        write(settings),
		"PUT /api/admin/lti/registrations/{id}":    write(settings),
		del + " /api/admin/lti/registrations/{id}": write(settings),
		// Launching a tool is learning a course's topic.
		"POST /api/lti/launches/{topic}":   read(courses),
		"GET /api/lti/authorize":           tokens.NoTokens,
		"GET /api/admin/lti/platform":      read(settings),
		"GET /api/admin/lti/tools":         read(settings),
		"POST /api/admin/lti/tools":        write(settings),
		"PUT /api/admin/lti/tools/{id}":    write(settings),
		del + " /api/admin/lti/tools/{id}": write(settings),
		// Asking a tool for content makes topics; the tool's signed answer
		// comes back through the browser, with no token of ours.
		"POST /api/lti/deep-links":        write(courses),
		"POST /api/lti/deep-links/return": tokens.NoTokens,
		// The grade services authenticate tools by their own service tokens.
		"POST /api/lti/token":                                   tokens.NoTokens,
		"GET /api/lti/ags/{topic}/lineitems":                    tokens.NoTokens,
		"POST /api/lti/ags/{topic}/lineitems":                   tokens.NoTokens,
		"POST /api/lti/ags/{topic}/lineitems/{lineitem}/scores": tokens.NoTokens,
	}
}()
