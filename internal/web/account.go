package web

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/lms-platform/lms/client"
)

// requireSession sends anonymous callers to the sign-in page.
func (h *Handler) requireSession(w http.ResponseWriter, r *http.Request) *session {
	s := h.readSession(r)
	if s == nil {
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
	}
	return s
}

type myCourse struct {
	Item    client.ProgressItem
	Program *program
	Topics  []*topic
}

type myData struct {
	Started  []myCourse
	Planned  []myCourse
	Finished []myCourse
	Seconds  int64
	Complete int64
}

// myProgressCourses caps the programs loaded for the progress page.
const myProgressCourses = 24

// myProgress lists the caller's courses with their progress, each with
// its topics and their statuses.
func (h *Handler) myProgress(w http.ResponseWriter, r *http.Request) {
	s := h.requireSession(w, r)
	if s == nil {
		return
	}
	var items []client.ProgressItem
	err := h.userCall(w, r, s, func(api *client.Client) (err error) {
		items, err = api.GetCoursesProgress(r.Context(), client.GetCoursesProgressParams{OrderBy: client.Ptr("id"),
			Order: client.Ptr("desc")})
		return err
	})
	if err != nil {
		if client.StatusOf(err) == http.StatusUnauthorized {
			http.Redirect(w, r, "/login?next=/my", http.StatusSeeOther)
			return
		}
		h.apiFailed(w, r, err)
		return
	}
	courses := make([]myCourse, len(items))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 6)
	for i := range items {
		courses[i].Item = items[i]
		if i >= myProgressCourses {
			continue
		}
		wg.Add(1)
		go func(c *myCourse) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			api := h.api.as(h.apiHost(r), s.token)
			if p, err := h.userProgram(r.Context(), api, strconv.FormatInt(c.Item.Course.ID, 10)); err == nil {
				c.Program = p
				walkTopics(p.Lessons, func(_ *lesson, t *topic) { c.Topics = append(c.Topics, t) })
			}
		}(&courses[i])
	}
	wg.Wait()
	var d myData
	for _, c := range courses {
		d.Seconds += c.Item.Seconds
		d.Complete += c.Item.FinishedTopics
		switch c.Item.Status {
		case "finished":
			d.Finished = append(d.Finished, c)
		case "started":
			d.Started = append(d.Started, c)
		default:
			d.Planned = append(d.Planned, c)
		}
	}
	h.render(w, r, http.StatusOK, "my", view{Title: "My learning", Nav: "my", SignedIn: true, Data: d})
}

type profileView struct {
	Profile client.Profile
	Notice  string
	Error   string
	Demo    bool
}

func (h *Handler) profile(w http.ResponseWriter, r *http.Request) {
	h.showProfile(w, r, http.StatusOK, profileView{})
}

func (h *Handler) showProfile(w http.ResponseWriter, r *http.Request, status int, d profileView) {
	s := h.requireSession(w, r)
	if s == nil {
		return
	}
	err := h.userCall(w, r, s, func(api *client.Client) error {
		p, err := api.GetProfileMe(r.Context())
		if err == nil {
			d.Profile = *p
		}
		return err
	})
	if err != nil {
		if client.StatusOf(err) == http.StatusUnauthorized {
			http.Redirect(w, r, "/login?next=/profile", http.StatusSeeOther)
			return
		}
		h.apiFailed(w, r, err)
		return
	}
	if r.URL.Query().Get("saved") == "1" {
		d.Notice = "Your profile was saved."
	}
	d.Demo = s.demo
	h.render(w, r, status, "profile", view{Title: "Profile", Nav: "profile", SignedIn: true, Data: d})
}

// saveProfile changes the caller's names and bio.
func (h *Handler) saveProfile(w http.ResponseWriter, r *http.Request) {
	s := h.requireSession(w, r)
	if s == nil {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.errorPage(w, r, http.StatusBadRequest, "That did not work", "The form could not be read.")
		return
	}
	first, last, bio := strings.TrimSpace(r.PostFormValue("first_name")), strings.TrimSpace(r.PostFormValue("last_name")),
		strings.TrimSpace(r.PostFormValue("bio"))
	err := h.userCall(w, r, s, func(api *client.Client) error {
		_, err := api.PutProfileMe(r.Context(), client.ProfileBody{FirstName: &first, LastName: &last, Bio: &bio})
		return err
	})
	var ae *client.Error
	if errors.As(err, &ae) && ae.Status == http.StatusUnprocessableEntity {
		msg := ae.Message
		for field, m := range ae.Errors {
			msg += " " + strings.TrimPrefix(field, "body.") + ": " + strings.Join(m, " ")
		}
		h.showProfile(w, r, http.StatusUnprocessableEntity, profileView{Error: msg})
		return
	}
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	http.Redirect(w, r, "/profile?saved=1", http.StatusSeeOther)
}

type loginData struct {
	Next     string
	Email    string
	Error    string
	Demo     []string
	Remember bool
	Social   []socialButton
	// Ended says that the browser's session ended (in its language).
	Ended string
}

func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	d := loginData{Next: localPath(r.URL.Query().Get("next"), "")}
	if h.sessionEnded(w, r) {
		d.Ended = sessionEndedText[acceptLang(r)]
	}
	h.showLogin(w, r, http.StatusOK, d)
}

func (h *Handler) showLogin(w http.ResponseWriter, r *http.Request, status int, d loginData) {
	if demo := h.demoInfo(r.Context(), r); demo.Enabled {
		seen := map[string]bool{}
		for _, u := range demo.Users {
			if !seen[u.Role] {
				seen[u.Role] = true
				d.Demo = append(d.Demo, u.Role)
			}
		}
		if len(d.Demo) == 0 {
			d.Demo = []string{"student"}
		}
	}
	d.Social = h.socialButtons(r)
	h.render(w, r, status, "login", view{Title: "Sign in", Nav: "login", SignedIn: h.readSession(r) != nil, Data: d})
}

// login signs in with e-mail and password; the token goes into the
// session cookie only.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		h.showLogin(w, r, http.StatusBadRequest, loginData{Error: "The form could not be read."})
		return
	}
	d := loginData{Next: localPath(r.PostFormValue("next"), ""), Email: strings.TrimSpace(r.PostFormValue("email")),
		Remember: r.PostFormValue("remember") != ""}
	tok, err := h.api.as(h.apiHost(r), "").PostAuthLogin(r.Context(), client.LoginInputBody{Email: d.Email,
		Password: r.PostFormValue("password"), RememberMe: d.Remember})
	var ae *client.Error
	switch {
	case errors.As(err, &ae) && ae.Status < 500:
		d.Error = "The e-mail address or password is not right, or the account is not active yet."
		if ae.Status == http.StatusTooManyRequests {
			d.Error = "Too many attempts. Please wait a minute and try again."
		}
		h.showLogin(w, r, http.StatusUnprocessableEntity, d)
		return
	case err != nil:
		h.apiFailed(w, r, err)
		return
	}
	h.setSession(w, r, *tok, false, 0)
	// A new session, a new CSRF secret: tokens of before are void.
	h.newCSRFSecret(w, r)
	http.Redirect(w, r, localPath(d.Next, h.landingOf(r, tok.Token)), http.StatusSeeOther)
}

// demoLogin signs in as a seeded demo user with one click.
func (h *Handler) demoLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	r.ParseForm()
	role := r.PostFormValue("role")
	if role != "student" && role != "tutor" && role != "admin" {
		role = "student"
	}
	tok, err := h.api.as(h.apiHost(r), "").PostDemoLogin(r.Context(), client.DemoLoginInputBody{Role: role})
	if client.StatusOf(err) == http.StatusNotFound {
		h.errorPage(w, r, http.StatusNotFound, "No demo here", "Demo mode is not turned on for this site.")
		return
	}
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	h.setSession(w, r, *tok, role == "student", 0)
	h.newCSRFSecret(w, r)
	http.Redirect(w, r, localPath(r.PostFormValue("next"), h.landingOf(r, tok.Token)), http.StatusSeeOther)
}

// logout revokes the token at the API and clears the cookies; an admin
// acting as a user signs out of both sessions.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if s := h.readSession(r); s != nil {
		tokens := []string{s.token}
		if a := h.keeper.actingOf(s.token); a != nil {
			tokens = append(tokens, a.admin)
		}
		for _, tok := range tokens {
			err := h.api.as(h.apiHost(r), tok).PostAuthLogout(r.Context())
			if err != nil && client.StatusOf(err) != http.StatusUnauthorized {
				h.log.Info("web: logout at the API failed", "err", err)
			}
		}
	}
	h.clearSession(w, r)
	h.forgetSession(w, r)
	h.newCSRFSecret(w, r)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// landingOf is where a user lands after signing in: tutors and admins on
// their dashboard (/teach), learners on their courses (/my). Asking
// fills the memo the header's links are drawn from.
func (h *Handler) landingOf(r *http.Request, token string) string {
	if !mayAuthor(h.navOf(r, token).perms) {
		return "/my"
	}
	return "/teach"
}
