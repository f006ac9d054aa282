package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// newCategory inserts a category straight into the tenant database: the
// API has no category routes of its own.
func newCategory(t *testing.T, env *apitest.Env, name string) int64 {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	var cid int64
	if err := tenant.DB.QueryRowContext(context.Background(), `INSERT INTO categories (name, slug, created_at, updated_at)
		VALUES ($1, $2, $3, $3) RETURNING id`, name, strings.ToLower(name), env.Clock.Now()).Scan(&cid); err != nil {
		t.Fatal(err)
	}
	return cid
}

// TestAdminUserInterests lists, adds and removes a user's interests on
// the admin user page, checking each change through the API; ids the API
// does not know and text that is no id are shown next to the add form;
// saving the rest of the user leaves the interests alone; only admins,
// with the form's token, change anything.
func TestAdminUserInterests(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		f := newAdminFixture(t, s)
		ctx := t.Context()
		pottery, chess := newCategory(t, s.env, "Pottery"), newCategory(t, s.env, "Chess")
		admin := s.env.ClientAs("admin")
		page := "/admin/users/" + id(f.user.ID)
		interests := func() []int64 {
			var out []int64
			for _, c := range apitest.Must(admin.GetAdminUsersIDInterests(ctx, f.user.ID))(t) {
				out = append(out, c.ID)
			}
			slices.Sort(out)
			return out
		}
		as := func(method, path string, form url.Values, status int) *resp {
			return s.must(req{method: method, path: path, token: f.adminToken, form: form}, status)
		}

		r := as("GET", page, nil, http.StatusOK)
		// The categories are offered by name, as checkboxes.
		for _, want := range []string{`id="interests-none"`, `id="interest-form"`, `name="interests_by" value="name"`,
			`<input type="checkbox" id="i-category-` + id(pottery) + `" name="interest" value="` + id(pottery) + `"><label for="i-category-` + id(pottery) + `">Pottery</label>`,
			`<label for="i-category-` + id(chess) + `">Chess</label>`} {
			if !strings.Contains(r.text(), want) {
				t.Fatalf("user page without interests lacks %q: %.5000s", want, r.text())
			}
		}
		if strings.Contains(r.text(), `id="i-add"`) {
			t.Fatal("the ids field beside the names")
		}
		r = as("POST", page+"/interests", url.Values{"interests_by": {"name"}, "interest": {id(pottery), id(chess)}}, http.StatusSeeOther)
		if loc := r.header.Get("Location"); loc != page+"?done=done.interests.added" {
			t.Fatalf("added: to %q", loc)
		}
		if got := interests(); !slices.Equal(got, []int64{pottery, chess}) {
			t.Fatalf("interests after adding: %v", got)
		}
		r = as("GET", page+"?done=done.interests.added", nil, http.StatusOK)
		for _, want := range []string{"Interests added.", `data-interest-id="` + id(pottery) + `"><span>Pottery</span>`,
			`data-interest-id="` + id(chess) + `"><span>Chess</span>`, `id="interest-remove-` + id(chess) + `"`} {
			if !strings.Contains(r.text(), want) {
				t.Fatalf("user page lacks %q: %.4000s", want, r.text())
			}
		}

		// Every category is an interest now: nothing left to offer.
		if !strings.Contains(r.text(), `id="interests-all"`) || strings.Contains(r.text(), `id="interest-form"`) {
			t.Fatalf("all interests: %.4000s", r.text())
		}
		// Nothing chosen, a value that is no id, an id the API does not
		// know: the page again with the message next to the choices;
		// nothing added.
		third := newCategory(t, s.env, "Zither")
		for _, chosen := range [][]string{nil, {"pottery"}, {"999999"}} {
			r = as("POST", page+"/interests", url.Values{"interests_by": {"name"}, "interest": chosen}, http.StatusUnprocessableEntity)
			if !strings.Contains(r.text(), `id="i-add-err"`) || !strings.Contains(r.text(), `<label for="i-category-`+id(third)+`">Zither</label>`) {
				t.Fatalf("%v: %.4000s", chosen, r.text())
			}
			if chosen == nil && !strings.Contains(r.text(), "Choose at least one category.") {
				t.Errorf("nothing chosen: %.4000s", r.text())
			}
		}
		// In Polish and Chinese, the same words.
		for lang, want := range map[string]string{"pl": "Dodaj zainteresowania", "zh": "添加兴趣"} {
			r := s.must(req{path: page, token: f.adminToken, headers: map[string]string{"Accept-Language": lang}}, http.StatusOK)
			if !strings.Contains(r.text(), "<legend>"+want+"</legend>") {
				t.Errorf("%s: %.4000s", lang, r.text())
			}
		}
		if got := interests(); !slices.Equal(got, []int64{pottery, chess}) {
			t.Fatalf("interests after refusals: %v", got)
		}

		r = as("POST", page+"/interests/"+id(pottery)+"/remove", nil, http.StatusSeeOther)
		if loc := r.header.Get("Location"); loc != page+"?done=done.interests.removed" {
			t.Fatalf("removed: to %q", loc)
		}
		if got := interests(); !slices.Equal(got, []int64{chess}) {
			t.Fatalf("interests after removing: %v", got)
		}
		// Saving the user's other fields keeps the interests.
		as("POST", page, url.Values{"first_name": {"Pat"}, "last_name": {"Pupil"}, "email": {f.user.Email},
			"roles": {"student"}}, http.StatusSeeOther)
		if got := interests(); !slices.Equal(got, []int64{chess}) {
			t.Fatalf("interests after saving the user: %v", got)
		}

		// The user's categories are chosen by name too: checked are the
		// user's; unchecking them all leaves none.
		as("POST", page, url.Values{"first_name": {"Pat"}, "last_name": {"Pupil"}, "email": {f.user.Email},
			"roles": {"student"}, "categories_by": {"name"}, "category": {id(pottery), id(third)}}, http.StatusSeeOther)
		cats := func() []int64 {
			var out []int64
			for _, c := range apitest.Must(admin.GetAdminUsersID(ctx, f.user.ID))(t).Categories {
				out = append(out, c.ID)
			}
			slices.Sort(out)
			return out
		}
		if got := cats(); !slices.Equal(got, []int64{pottery, third}) {
			t.Fatalf("categories chosen by name: %v", got)
		}
		r = as("GET", page, nil, http.StatusOK)
		if !strings.Contains(r.text(), `id="u-category-`+id(pottery)+`" name="category" value="`+id(pottery)+`" checked>`) ||
			strings.Contains(r.text(), `id="u-category-`+id(chess)+`" name="category" value="`+id(chess)+`" checked>`) {
			t.Fatalf("the user's categories: %.5000s", r.text())
		}
		as("POST", page, url.Values{"first_name": {"Pat"}, "last_name": {"Pupil"}, "email": {f.user.Email},
			"roles": {"student"}, "categories_by": {"name"}}, http.StatusSeeOther)
		if got := cats(); len(got) != 0 {
			t.Fatalf("categories after unchecking all: %v", got)
		}
		if got := interests(); !slices.Equal(got, []int64{chess}) {
			t.Fatalf("interests after saving the categories: %v", got)
		}

		// A token that may not read the list (an admin's scoped token
		// without courses:read) types ids, as before.
		pat := apitest.Must(s.env.Client("", f.adminToken).PostAuthTokens(ctx, client.CreateInputBody{Name: "users only",
			Scopes: []string{"users:write", "users:read", "groups:read", "profile:read"}}))(t).Token
		r = s.must(req{path: page, token: pat}, http.StatusOK)
		if !strings.Contains(r.text(), `id="i-add"`) || !strings.Contains(r.text(), `id="u-categories" name="categories"`) ||
			strings.Contains(r.text(), `name="interests_by"`) {
			t.Fatalf("scoped admin's user page: %.5000s", r.text())
		}
		for _, typed := range []string{"pottery", "999999"} {
			r = s.must(req{method: "POST", path: page + "/interests", token: pat, form: url.Values{"interests": {typed}}}, http.StatusUnprocessableEntity)
			if !strings.Contains(r.text(), `id="i-add-err"`) || !strings.Contains(r.text(), `value="`+typed+`"`) {
				t.Fatalf("%s: %.4000s", typed, r.text())
			}
		}
		s.must(req{method: "POST", path: page + "/interests", token: pat, form: url.Values{"interests": {id(third)}}}, http.StatusSeeOther)
		if got := interests(); !slices.Equal(got, []int64{chess, third}) {
			t.Fatalf("interests typed by id: %v", got)
		}
		as("POST", page+"/interests/"+id(third)+"/remove", nil, http.StatusSeeOther)

		// Others, and a form without its token, change nothing.
		for _, tok := range []string{f.studentToken, f.tutorToken} {
			s.must(req{method: "POST", path: page + "/interests", token: tok, form: url.Values{"interests": {id(pottery)}}}, http.StatusNotFound)
			s.must(req{method: "POST", path: page + "/interests/" + id(chess) + "/remove", token: tok}, http.StatusNotFound)
		}
		s.must(req{method: "POST", path: page + "/interests", token: f.adminToken, noCSRF: true,
			form: url.Values{"interests": {id(pottery)}}}, http.StatusForbidden)
		s.must(req{method: "POST", path: page + "/interests/" + id(chess) + "/remove", token: f.adminToken, noCSRF: true}, http.StatusForbidden)
		if got := interests(); !slices.Equal(got, []int64{chess}) {
			t.Fatalf("interests after refused forms: %v", got)
		}
	})
}
