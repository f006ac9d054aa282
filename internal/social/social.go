// Package social is social login: two OpenID Connect providers per
// tenant (Google and Microsoft Entra ID are the ones an operator picks,
// any provider with discovery works), with the authorization code flow,
// PKCE and a nonce. The flow is stateless: the PKCE verifier, the nonce
// and the page to return to travel sealed in the state parameter, and the
// identity the provider proved travels sealed to the frontend, which
// redeems it once at POST /api/auth/social/complete/{token}, supplying
// what the tenant needs and the provider did not say.
//
// A person is recognised by the provider's subject (slot, issuer, sub),
// never by e-mail alone: an account with the same address is linked only
// when the provider says the address is verified.
package social

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Providers are the two provider slots, the {provider} of the routes.
var Providers = []string{"google", "microsoft"}

// Times of the flow.
const (
	// StateLifetime bounds the time from the start to the callback: the
	// provider's sign-in page sits between them.
	StateLifetime = 10 * time.Minute
	// HandoffLifetime bounds the time from the callback to the complete
	// step, which may wait for the person to fill in a form.
	HandoffLifetime = 10 * time.Minute
	// providerTTL is how long a provider's discovery document (and with
	// it its key set) is reused before it is read again.
	providerTTL = time.Hour
)

// Settings is what social login reads of the administrable configuration.
type Settings interface {
	String(ctx context.Context, t *platform.Tenant, key string) (string, error)
	Bool(ctx context.Context, t *platform.Tenant, key string) (bool, error)
}

// Accounts is what social login needs of auth: the accounts it creates
// follow the registration settings, and its logins the rules of every
// login.
type Accounts interface {
	RegisterExternal(ctx context.Context, t *platform.Tenant, in auth.Registration, emailVerified bool,
		within func(tx *sqldb.Tx, u accounts.User) error) (accounts.User, error)
	LoginAccount(ctx context.Context, t *platform.Tenant, u accounts.User, remember bool) (auth.Issued, error)
}

// Service carries the flow.
type Service struct {
	Clock    clock.Clock
	Settings Settings
	Accounts Accounts
	// HTTP reaches the providers (discovery, key sets, token endpoint),
	// under the outbound-fetch checks.
	HTTP *http.Client
	// FrontURL is where a tenant's sign-ins land on the frontend.
	FrontURL func(platform.Record) string
}

// refusal is a refused step of the flow: its code names the check that
// failed.
func refusal(kind apperr.Kind, code, message string) *apperr.Error {
	e := apperr.New(kind, message)
	e.Code = code
	return e
}

// provider is one configured slot.
type provider struct {
	slot, clientID, secret, redirect, issuer string
}

// provider reads the slot's settings: it answers only when it is enabled
// and has a client id, a secret and an issuer.
func (s *Service) provider(ctx context.Context, t *platform.Tenant, slot, origin string) (provider, error) {
	notConfigured := refusal(apperr.NotFound, "provider_not_configured", "This sign-in provider is not configured.")
	if !slices.Contains(Providers, slot) {
		return provider{}, notConfigured
	}
	prefix := "lms_auth.socialite." + slot + "."
	on, err := s.Settings.Bool(ctx, t, prefix+"enabled")
	if err != nil {
		return provider{}, err
	}
	p := provider{slot: slot}
	for key, into := range map[string]*string{"client_id": &p.clientID, "client_secret": &p.secret,
		"redirect": &p.redirect, "issuer": &p.issuer} {
		if *into, err = s.Settings.String(ctx, t, prefix+key); err != nil {
			return provider{}, err
		}
	}
	if !on || p.clientID == "" || p.secret == "" || p.issuer == "" {
		return provider{}, notConfigured
	}
	if p.redirect == "" {
		p.redirect = origin + CallbackPath(slot)
	}
	return p, nil
}

// CallbackPath is the API's callback route of a slot, the default redirect.
func CallbackPath(slot string) string { return "/api/auth/social/" + slot + "/callback" }

// cache keeps each tenant's discovered providers by issuer.
type cache struct {
	mu sync.Mutex
	by map[string]cached
}

type cached struct {
	p  *oidc.Provider
	at time.Time
}

type cacheKey struct{}

// discover reads the issuer's discovery document, or reuses it for an
// hour: the provider's key set is cached with it.
func (s *Service) discover(ctx context.Context, t *platform.Tenant, issuer string) (*oidc.Provider, error) {
	c := t.Local(cacheKey{}, func() any { return &cache{by: map[string]cached{}} }).(*cache)
	now := s.Clock.Now()
	c.mu.Lock()
	e, ok := c.by[issuer]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < providerTTL {
		return e.p, nil
	}
	// Later key set fetches run outside this request: the provider keeps
	// the client, not the request's cancellation.
	p, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), s.HTTP), issuer)
	if err != nil {
		return nil, apperr.Wrap(apperr.Unavailable, err, "The sign-in provider cannot be reached.")
	}
	c.mu.Lock()
	c.by[issuer] = cached{p: p, at: now}
	c.mu.Unlock()
	return p, nil
}

func (p provider) oauth(op *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: p.clientID, ClientSecret: p.secret, Endpoint: op.Endpoint(),
		RedirectURL: p.redirect, Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
}

// flowState is the sealed state parameter.
type flowState struct {
	Provider string `json:"p"`
	Verifier string `json:"v"`
	Nonce    string `json:"n"`
	Next     string `json:"r,omitempty"`
	Bind     string `json:"b,omitempty"`
	Expires  int64  `json:"e"`
}

// Start answers the provider's authorization URL for a new sign-in;
// origin is the scheme and host the request came to, next the page of the
// frontend to return to, bind the frontend's opaque tie to the browser,
// given back at the landing.
func (s *Service) Start(ctx context.Context, t *platform.Tenant, origin, slot, next, bind string) (string, error) {
	p, err := s.provider(ctx, t, slot, origin)
	if err != nil {
		return "", err
	}
	if next != "" && !localPath(next) {
		return "", apperr.Field("next", "The next page must be a path of the frontend.")
	}
	op, err := s.discover(ctx, t, p.issuer)
	if err != nil {
		return "", err
	}
	st := flowState{Provider: slot, Verifier: oauth2.GenerateVerifier(), Nonce: randomString(16), Next: next,
		Bind: bind, Expires: s.Clock.Now().Add(StateLifetime).Unix()}
	state, err := seal(t, purposeState, st)
	if err != nil {
		return "", err
	}
	return p.oauth(op).AuthCodeURL(state, oauth2.S256ChallengeOption(st.Verifier), oidc.Nonce(st.Nonce)), nil
}

// localPath accepts a path of the frontend, not another site ("//host").
func localPath(p string) bool {
	return strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") && !strings.ContainsAny(p, "\\\r\n\t")
}

// handoff is the identity the provider proved, sealed for the complete
// step.
type handoff struct {
	ID            string `json:"id"`
	Provider      string `json:"p"`
	Issuer        string `json:"iss"`
	Subject       string `json:"sub"`
	Email         string `json:"email,omitempty"`
	EmailVerified bool   `json:"ev,omitempty"`
	GivenName     string `json:"gn,omitempty"`
	FamilyName    string `json:"fn,omitempty"`
	Expires       int64  `json:"e"`
}

// claims are what we read of the provider's id_token beside sub.
type claims struct {
	Email         string          `json:"email"`
	EmailVerified json.RawMessage `json:"email_verified"`
	GivenName     string          `json:"given_name"`
	FamilyName    string          `json:"family_name"`
}

// verified reads email_verified, a boolean, or the string some providers
// send.
func (c claims) verified() bool {
	v := strings.Trim(string(c.EmailVerified), `"`)
	return v == "true"
}

// Landing is where the callback sends the browser: the frontend's
// /auth/social with the sealed hand-off (or the provider's error code)
// and the page to return to.
type Landing struct {
	Token, Error, Next, Bind string
}

// URL is the landing on the tenant's frontend.
func (l Landing) URL(front string) string {
	q := url.Values{}
	for k, v := range map[string]string{"token": l.Token, "error": l.Error, "next": l.Next, "bind": l.Bind} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return front + "/auth/social?" + q.Encode()
}

// Callback checks the provider's answer (state, code with the PKCE
// verifier, id_token with its signature, issuer, audience, times and
// nonce) and seals the identity it proves. It writes nothing.
func (s *Service) Callback(ctx context.Context, t *platform.Tenant, origin, slot, code, state, providerError string) (Landing, error) {
	p, err := s.provider(ctx, t, slot, origin)
	if err != nil {
		return Landing{}, err
	}
	var st flowState
	if err := open(t, purposeState, state, &st); err != nil || st.Provider != slot || s.Clock.Now().Unix() >= st.Expires {
		return Landing{}, refusal(apperr.Unauthorized, "invalid_state", "The sign-in state is invalid or has expired. Please sign in again.")
	}
	if providerError != "" {
		// The person declined or the provider refused: the frontend says so.
		return Landing{Error: errorCode(providerError), Next: st.Next, Bind: st.Bind}, nil
	}
	if code == "" {
		return Landing{}, refusal(apperr.BadRequest, "invalid_request", "The provider's answer has no code.")
	}
	op, err := s.discover(ctx, t, p.issuer)
	if err != nil {
		return Landing{}, err
	}
	octx := oidc.ClientContext(ctx, s.HTTP)
	tok, err := p.oauth(op).Exchange(octx, code, oauth2.VerifierOption(st.Verifier))
	if err != nil {
		if _, rejected := errors.AsType[*oauth2.RetrieveError](err); rejected {
			e := apperr.Wrap(apperr.Unauthorized, err, "The provider did not accept the sign-in. Please sign in again.")
			e.Code = "code_rejected"
			return Landing{}, e
		}
		return Landing{}, apperr.Wrap(apperr.Unavailable, err, "The sign-in provider cannot be reached.")
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Landing{}, refusal(apperr.Unauthorized, "invalid_id_token", "The provider sent no id_token.")
	}
	idt, err := op.Verifier(&oidc.Config{ClientID: p.clientID, Now: s.Clock.Now}).Verify(octx, raw)
	if err != nil {
		e := apperr.Wrap(apperr.Unauthorized, err, "The provider's id_token is not valid.")
		e.Code = "invalid_id_token"
		return Landing{}, e
	}
	if idt.Nonce != st.Nonce {
		return Landing{}, refusal(apperr.Unauthorized, "invalid_nonce", "The provider's id_token is not for this sign-in.")
	}
	var c claims
	if err := idt.Claims(&c); err != nil {
		return Landing{}, refusal(apperr.Unauthorized, "invalid_id_token", "The provider's id_token is not valid.")
	}
	h := handoff{ID: randomString(16), Provider: slot, Issuer: idt.Issuer, Subject: idt.Subject,
		Email: clip(c.Email, 254), EmailVerified: c.verified(), GivenName: clip(c.GivenName, 255),
		FamilyName: clip(c.FamilyName, 255), Expires: s.Clock.Now().Add(HandoffLifetime).Unix()}
	sealed, err := seal(t, purposeHandoff, h)
	if err != nil {
		return Landing{}, err
	}
	return Landing{Token: sealed, Next: st.Next, Bind: st.Bind}, nil
}

// errorCode keeps an OAuth error code (letters and underscores) to pass on.
func errorCode(s string) string {
	s = clip(s, 64)
	if strings.Trim(s, "abcdefghijklmnopqrstuvwxyz_") != "" {
		return "provider_error"
	}
	return s
}

func clip(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) > n {
		r = r[:n]
	}
	return string(r)
}

// Details are what the person supplies at the complete step; each is
// used only where the provider said nothing.
type Details struct {
	Email     string
	FirstName string
	LastName  string
	Groups    []int64
	// Origin is the scheme and host the request came to, for the
	// verification link of an address the provider did not vouch for.
	Origin string
}

// Complete redeems a hand-off, once: the person behind the provider's
// subject is logged in; else an account with the provider's verified
// address is linked and logged in; else a new account is registered with
// the provider's data and the details, which must supply what the
// provider left out (422 naming each missing field, nothing written). The
// token class follows lms_auth.socialite_remember_me.
func (s *Service) Complete(ctx context.Context, t *platform.Tenant, token string, in Details) (auth.Issued, error) {
	var h handoff
	now := s.Clock.Now()
	if err := open(t, purposeHandoff, token, &h); err != nil || now.Unix() >= h.Expires {
		return auth.Issued{}, refusal(apperr.Unauthorized, "invalid_token", "This sign-in is invalid or has expired. Please sign in again.")
	}
	remember, err := s.Settings.Bool(ctx, t, "lms_auth.socialite_remember_me")
	if err != nil {
		return auth.Issued{}, err
	}
	id := identity{Provider: h.Provider, Issuer: h.Issuer, Subject: h.Subject, Email: h.Email}
	userID, err := userOf(ctx, t.DB, id)
	if err != nil {
		return auth.Issued{}, err
	}
	if userID == 0 && h.Email != "" {
		existing, err := accounts.ByEmail(ctx, t.DB, h.Email)
		switch {
		case err == nil && !h.EmailVerified:
			return auth.Issued{}, refusal(apperr.Conflict, "account_exists", "An account with this e-mail address "+
				"exists, and the provider did not confirm that the address is yours. Sign in with the account's password.")
		case err == nil:
			userID = existing.ID
			err = t.Tx(ctx, func(tx *sqldb.Tx) error {
				if err := redeem(ctx, tx, h.ID, now, h.Expires); err != nil {
					return err
				}
				return link(ctx, tx, now, id, userID)
			})
			if err != nil {
				return auth.Issued{}, err
			}
			return s.login(ctx, t, userID, remember)
		case !apperr.Is(err, apperr.NotFound):
			return auth.Issued{}, err
		}
	}
	if userID != 0 {
		if err := redeem(ctx, t.DB, h.ID, now, h.Expires); err != nil {
			return auth.Issued{}, err
		}
		return s.login(ctx, t, userID, remember)
	}
	reg, verified, err := registration(h, in)
	if err != nil {
		return auth.Issued{}, err
	}
	u, err := s.Accounts.RegisterExternal(ctx, t, reg, verified, func(tx *sqldb.Tx, u accounts.User) error {
		if err := redeem(ctx, tx, h.ID, now, h.Expires); err != nil {
			return err
		}
		id.Email = u.Email
		return link(ctx, tx, now, id, u.ID)
	})
	if err != nil {
		return auth.Issued{}, err
	}
	return s.Accounts.LoginAccount(ctx, t, u, remember)
}

func (s *Service) login(ctx context.Context, t *platform.Tenant, userID int64, remember bool) (auth.Issued, error) {
	u, err := accounts.ByID(ctx, t.DB, userID)
	if err != nil {
		return auth.Issued{}, err
	}
	return s.Accounts.LoginAccount(ctx, t, u, remember)
}

// registration is the new account: the provider's data first, the
// details for the rest; every field still missing is named.
func registration(h handoff, in Details) (auth.Registration, bool, error) {
	reg := auth.Registration{Email: h.Email, FirstName: h.GivenName, LastName: h.FamilyName, Groups: in.Groups,
		Origin: in.Origin}
	verified := h.Email != "" && h.EmailVerified
	missing := apperr.New(apperr.Invalid, "Please complete your account.")
	missing.Code = "details_required"
	missing.Fields = map[string][]string{}
	for field, pair := range map[string][2]*string{"email": {&reg.Email, &in.Email},
		"first_name": {&reg.FirstName, &in.FirstName}, "last_name": {&reg.LastName, &in.LastName}} {
		if *pair[0] == "" {
			*pair[0] = strings.TrimSpace(*pair[1])
		}
		if *pair[0] == "" {
			missing.Fields[field] = []string{"The " + strings.ReplaceAll(field, "_", " ") + " field is required."}
		}
	}
	if len(missing.Fields) > 0 {
		return auth.Registration{}, false, missing
	}
	return reg, verified, nil
}
