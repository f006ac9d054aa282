package web

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/lms-platform/lms/client"
)

// h5pEditor is the H5P editor of an authoring form: the H5P service's
// editor page framed from the content origin, and the edit grant that
// teach.js hands it (lms-h5p:token). The author's session never goes to
// that origin, where the editor runs the code of the installed libraries:
// the grant opens the editor of this one content and nothing else, for two
// hours (see internal/h5p, EditGrant). When the author saves the form, the
// page asks the editor to save first (lms-h5p:save) and sends the form
// with the content's id once the editor answers lms-h5p:saved.
type h5pEditor struct {
	Src   string
	Grant string
	// ContentID is the content edited, "" for a new one not yet saved.
	ContentID string
	// Error says why the editor cannot be opened.
	Error string
	// Renew is how often, in seconds, the page renews the grant.
	Renew int
}

// newH5PEditor opens the H5P editor of content id for a, or of a new
// content when id is "": the grant is issued to the author by the H5P
// service, on the server side.
func (h *Handler) newH5PEditor(r *http.Request, a *author, id string) *h5pEditor {
	e := &h5pEditor{ContentID: id}
	if h.contentOrigin(r) == "" {
		e.Error = a.t.S("h5p_editor_off")
		return e
	}
	if id == "" {
		id = "new"
	}
	g, status, msg := h.editGrant(r, a, id)
	if status != http.StatusCreated {
		e.Error = msg
		return e
	}
	e.Grant, e.Renew = g.Grant, int(h5pGrantRenewal/time.Second)
	e.Src = h.h5pEmbed(r, "/h5p/embed/edit/"+url.PathEscape(g.ContentID)+"?language="+url.QueryEscape(a.lang))
	return e
}

// h5pGrantRenewal is how often teach.js renews the grant of an open
// editor: well within the grant's two hours, so that a long sitting saves.
const h5pGrantRenewal = 50 * time.Minute

// teachH5PGrant renews the edit grant of an open H5P editor for teach.js,
// which hands it to the editor (lms-h5p:token): the form's content, or
// new. It answers {success, data: {grant}}, or the H5P service's refusal.
func (h *Handler) teachH5PGrant(w http.ResponseWriter, r *http.Request) {
	a := h.authorOf(w, r)
	if a == nil {
		return
	}
	id := r.PostFormValue("content")
	if id != "new" && !isID(id) {
		writeJSONError(w, http.StatusUnprocessableEntity, "content: an H5P content id, or new.")
		return
	}
	g, status, msg := h.editGrant(r, a, id)
	if status != http.StatusCreated {
		writeJSONError(w, status, msg)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	b, _ := jsonMarshal(map[string]any{"success": true, "data": map[string]string{"grant": g.Grant}})
	w.Write(b)
}

// editGrant asks the H5P service for a's edit grant of content id (or
// new): the grant with 201, else the status and message to show.
func (h *Handler) editGrant(r *http.Request, a *author, id string) (*client.EditGrant, int, string) {
	g, err := a.api.PostH5PContentsIDEditGrant(r.Context(), id)
	var ae *client.Error
	switch {
	case errors.As(err, &ae) && ae.Status < 500:
		return nil, ae.Status, ae.Message
	case err != nil:
		h.log.Warn("web: H5P edit grant", "err", err)
		return nil, http.StatusBadGateway, a.t.S("h5p_editor_down")
	}
	return g, http.StatusCreated, ""
}

// openH5PEditor opens the editor of an H5P topic's content on its page.
func (h *Handler) openH5PEditor(r *http.Request, a *author, d *topicPageData) {
	if d.Kind == "h5p" && isID(d.H5P.ContentID) {
		d.H5PEditor = h.newH5PEditor(r, a, d.H5P.ContentID)
	}
}
