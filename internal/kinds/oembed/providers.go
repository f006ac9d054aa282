package oembed

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Provider is an oEmbed provider known in advance, so its pages need not be
// fetched for discovery. Schemes follow oembed.com: URL patterns where "*"
// stands for any text; in the host it stands for at least one character
// and never crosses a "/". http and https are interchangeable in schemes.
type Provider struct {
	Name string
	// URL is the provider's home page, used when a response has no
	// provider_url.
	URL string
	// Endpoint is the oEmbed API; "{format}" in it is replaced by "json".
	Endpoint string
	Schemes  []string
	// EmbedHosts are the hosts an embedded iframe may load from;
	// "*.example.com" stands for any subdomain of example.com.
	EmbedHosts []string
}

// defaultProviders are well-known providers, from their oembed.com
// entries and documentation. Read only: DefaultProviders hands out copies.
var defaultProviders = []Provider{
	{
		Name:     "YouTube",
		URL:      "https://www.youtube.com/",
		Endpoint: "https://www.youtube.com/oembed",
		Schemes: []string{
			"https://*.youtube.com/watch*",
			"https://youtube.com/watch*",
			"https://*.youtube.com/v/*",
			"https://*.youtube.com/embed/*",
			"https://*.youtube.com/shorts/*",
			"https://youtube.com/shorts/*",
			"https://*.youtube.com/live/*",
			"https://*.youtube.com/playlist?list=*",
			"https://youtube.com/playlist?list=*",
			"https://youtu.be/*",
		},
		EmbedHosts: []string{"www.youtube.com", "www.youtube-nocookie.com"},
	},
	{
		Name:     "Vimeo",
		URL:      "https://vimeo.com/",
		Endpoint: "https://vimeo.com/api/oembed.{format}",
		Schemes: []string{
			"https://vimeo.com/*",
			"https://www.vimeo.com/*",
			"https://player.vimeo.com/video/*",
		},
		EmbedHosts: []string{"player.vimeo.com"},
	},
	{
		Name:     "Dailymotion",
		URL:      "https://www.dailymotion.com/",
		Endpoint: "https://www.dailymotion.com/services/oembed",
		Schemes: []string{
			"https://www.dailymotion.com/video/*",
			"https://dailymotion.com/video/*",
			"https://dai.ly/*",
		},
		EmbedHosts: []string{"www.dailymotion.com", "geo.dailymotion.com"},
	},
	{
		Name:     "SoundCloud",
		URL:      "https://soundcloud.com/",
		Endpoint: "https://soundcloud.com/oembed",
		Schemes: []string{
			"https://soundcloud.com/*",
			"https://m.soundcloud.com/*",
			"https://on.soundcloud.com/*",
		},
		EmbedHosts: []string{"w.soundcloud.com"},
	},
	{
		Name:       "Spotify",
		URL:        "https://spotify.com/",
		Endpoint:   "https://open.spotify.com/oembed",
		Schemes:    []string{"https://open.spotify.com/*"},
		EmbedHosts: []string{"open.spotify.com"},
	},
	{
		Name:     "Flickr",
		URL:      "https://www.flickr.com/",
		Endpoint: "https://www.flickr.com/services/oembed/",
		Schemes: []string{
			"https://*.flickr.com/photos/*",
			"https://flickr.com/photos/*",
			"https://flic.kr/p/*",
			"https://flic.kr/s/*",
		},
		EmbedHosts: []string{"*.flickr.com"},
	},
	{
		Name:     "SlideShare",
		URL:      "https://www.slideshare.net/",
		Endpoint: "https://www.slideshare.net/api/oembed/2",
		Schemes: []string{
			"https://*.slideshare.net/*/*",
			"https://slideshare.net/*/*",
		},
		EmbedHosts: []string{"www.slideshare.net"},
	},
	{
		// Twitter answers a blockquote and a script, no iframe: the value
		// keeps the title and author and an empty html.
		Name:     "Twitter",
		URL:      "https://twitter.com/",
		Endpoint: "https://publish.twitter.com/oembed",
		Schemes: []string{
			"https://twitter.com/*/status/*",
			"https://*.twitter.com/*/status/*",
			"https://x.com/*/status/*",
			"https://*.x.com/*/status/*",
		},
		EmbedHosts: []string{"platform.twitter.com"},
	},
	{
		Name:     "TED",
		URL:      "https://www.ted.com/",
		Endpoint: "https://www.ted.com/services/v1/oembed.{format}",
		Schemes: []string{
			"https://ted.com/talks/*",
			"https://www.ted.com/talks/*",
			"https://embed.ted.com/talks/*",
		},
		EmbedHosts: []string{"embed.ted.com"},
	},
	{
		Name:       "CodePen",
		URL:        "https://codepen.io/",
		Endpoint:   "https://codepen.io/api/oembed",
		Schemes:    []string{"https://codepen.io/*"},
		EmbedHosts: []string{"codepen.io"},
	},
	{
		Name:     "Loom",
		URL:      "https://www.loom.com/",
		Endpoint: "https://www.loom.com/v1/oembed",
		Schemes: []string{
			"https://loom.com/share/*",
			"https://www.loom.com/share/*",
			"https://loom.com/i/*",
			"https://www.loom.com/i/*",
			"https://www.loom.com/embed/*",
		},
		EmbedHosts: []string{"www.loom.com"},
	},
	{
		Name:     "Wistia",
		URL:      "https://wistia.com/",
		Endpoint: "https://fast.wistia.com/oembed.{format}",
		Schemes: []string{
			"https://fast.wistia.com/embed/iframe/*",
			"https://fast.wistia.com/embed/playlists/*",
			"https://*.wistia.com/medias/*",
			"https://*.wi.st/medias/*",
		},
		EmbedHosts: []string{"fast.wistia.net", "fast.wistia.com"},
	},
	{
		Name:       "Speaker Deck",
		URL:        "https://speakerdeck.com/",
		Endpoint:   "https://speakerdeck.com/oembed.{format}",
		Schemes:    []string{"https://speakerdeck.com/*/*"},
		EmbedHosts: []string{"speakerdeck.com"},
	},
	{
		Name:     "Mixcloud",
		URL:      "https://www.mixcloud.com/",
		Endpoint: "https://app.mixcloud.com/oembed/",
		Schemes: []string{
			"https://www.mixcloud.com/*/*/",
			"https://mixcloud.com/*/*/",
		},
		EmbedHosts: []string{"www.mixcloud.com", "player-widget.mixcloud.com"},
	},
}

// DefaultProviders returns a copy of the built-in provider list, for
// Options.Providers to extend or rewire.
func DefaultProviders() []Provider {
	out := make([]Provider, len(defaultProviders))
	for i, p := range defaultProviders {
		p.Schemes = slices.Clone(p.Schemes)
		p.EmbedHosts = slices.Clone(p.EmbedHosts)
		out[i] = p
	}
	return out
}

// registry finds the provider of a URL through compiled schemes.
type registry struct {
	providers []Provider
	schemes   []*regexp.Regexp
	owner     []int // provider index of each scheme
}

func newRegistry(providers []Provider) *registry {
	r := &registry{providers: providers}
	for i, p := range providers {
		for _, s := range p.Schemes {
			re := compileScheme(s)
			if re == nil {
				continue
			}
			r.schemes = append(r.schemes, re)
			r.owner = append(r.owner, i)
		}
	}
	return r
}

// find returns the provider whose scheme matches u.
func (r *registry) find(u *url.URL) (Provider, bool) {
	target := schemeTarget(u)
	for i, re := range r.schemes {
		if re.MatchString(target) {
			return r.providers[r.owner[i]], true
		}
	}
	return Provider{}, false
}

// compileScheme turns a scheme into a regular expression over what
// schemeTarget gives; schemes that are not http(s) URLs give nil.
func compileScheme(scheme string) *regexp.Regexp {
	rest, ok := cutHTTP(scheme)
	if !ok {
		return nil
	}
	host, path, _ := strings.Cut(rest, "/")
	var b strings.Builder
	b.WriteString("^")
	for i, part := range strings.Split(strings.ToLower(host), "*") {
		if i > 0 {
			b.WriteString("[^/]+")
		}
		b.WriteString(regexp.QuoteMeta(part))
	}
	b.WriteString("/")
	for i, part := range strings.Split(path, "*") {
		if i > 0 {
			b.WriteString(".*")
		}
		b.WriteString(regexp.QuoteMeta(part))
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// schemeTarget is the URL without scheme and fragment, host in lower case:
// "www.youtube.com/watch?v=1".
func schemeTarget(u *url.URL) string {
	s := strings.ToLower(u.Host) + "/" + strings.TrimPrefix(u.EscapedPath(), "/")
	if u.RawQuery != "" {
		s += "?" + u.RawQuery
	}
	return s
}

func cutHTTP(s string) (string, bool) {
	if rest, ok := strings.CutPrefix(s, "https://"); ok {
		return rest, true
	}
	return strings.CutPrefix(s, "http://")
}

// hostAllowed reports whether host matches one of patterns, where
// "*.example.com" matches every subdomain of example.com.
func hostAllowed(host string, patterns []string) bool {
	host = strings.ToLower(host)
	for _, p := range patterns {
		if sub, ok := strings.CutPrefix(p, "*."); ok {
			if strings.HasSuffix(host, "."+sub) {
				return true
			}
		} else if host == p {
			return true
		}
	}
	return false
}
