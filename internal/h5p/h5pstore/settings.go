package h5pstore

import (
	"time"

	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
)

// Settings tune the H5P service beyond its storage: the newest H5P core
// API it accepts, the hub its content-type cache is refreshed from and the
// limits of what it keeps.
// They live on the Store because the Store is the one object the service,
// its wiring and the tests all hold; they are read on every request and
// may change at run time. The zero value takes every default.
type Settings struct {
	// CoreAPI is the newest core API a library may require; zero means
	// h5ppackage.DefaultCoreAPI.
	CoreAPI h5ppackage.Version
	// HubURL is the content-type endpoint of the H5P hub; empty means the
	// service's default (api.h5p.org).
	HubURL string
	// HubTimeout bounds one call to the hub; zero means the service's
	// default.
	HubTimeout time.Duration
	// MaxParamsSize caps the parameters of one content (content.json of a
	// package, params of an editor save) in bytes; zero means
	// h5ppackage.DefaultMaxContentSize.
	MaxParamsSize int64
	// MaxStateSize caps one saved user state (contentUserData) in bytes;
	// zero means DefaultMaxStateSize.
	MaxStateSize int64
	// MaxStates caps the states one user keeps in one content, all data
	// types, sub-contents and contexts together; zero means
	// DefaultMaxStates.
	MaxStates int
}

// Defaults of the user state limits.
const (
	DefaultMaxStateSize = 1 << 20
	DefaultMaxStates    = 64
)

// Settings returns the current settings, every zero field defaulted.
func (s *Store) Settings() Settings {
	var out Settings
	if p := s.settings.Load(); p != nil {
		out = *p
	}
	if out.CoreAPI == (h5ppackage.Version{}) {
		out.CoreAPI = h5ppackage.DefaultCoreAPI()
	}
	if out.MaxParamsSize <= 0 {
		out.MaxParamsSize = h5ppackage.DefaultMaxContentSize
	}
	if out.MaxStateSize <= 0 {
		out.MaxStateSize = DefaultMaxStateSize
	}
	if out.MaxStates <= 0 {
		out.MaxStates = DefaultMaxStates
	}
	return out
}

// SetSettings replaces the settings; safe while requests are served.
func (s *Store) SetSettings(v Settings) { s.settings.Store(&v) }

// CoreAPI is the newest core API a library may require.
func (s *Store) CoreAPI() h5ppackage.Version { return s.Settings().CoreAPI }
