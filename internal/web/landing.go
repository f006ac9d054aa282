package web

import "net/http"

// landingText is the platform landing in one language.
type landingText struct {
	Lang        string
	Title       string
	Tagline     string
	Lead        string
	Browse      string
	SignIn      string
	Features    []feature
	KindsTitle  string
	Kinds       []string
	TenantTitle string
	TenantText  string
	Footer      string
}

type feature struct{ Title, Text string }

// landingLinks are the language versions, for the switcher and hreflang.
var landingLinks = []struct{ Lang, Path, Name string }{
	{"en", "/", "English"},
	{"pl", "/pl/", "Polski"},
	{"zh", "/zh/", "中文"},
}

var landings = map[string]landingText{
	"en": {
		Lang:    "en",
		Title:   "A learning platform that gets out of the way",
		Tagline: "Courses, lessons and progress — for every school you run",
		Lead: "Build courses from lessons and topics, bring in text, images, audio, video, PDFs and interactive " +
			"H5P exercises, and let learners’ progress record itself. Each school gets its own space, its own data " +
			"and its own address.",
		Browse: "Browse courses",
		SignIn: "Sign in",
		Features: []feature{
			{"Courses with a clear shape", "Lessons group the material and topics lead learners through it one " +
				"step at a time, from the first explanation to the final assignment."},
			{"Every kind of content", "Reading, pictures, sound, video, PDF documents, embedded media, project " +
				"uploads and H5P activities sit side by side in one program."},
			{"Progress that keeps itself", "The platform notes what was read, watched and completed, so learners " +
				"always know where they stopped and teachers see how far everyone got."},
			{"Open by design", "Everything these pages do goes through a documented API, so you can connect your " +
				"own tools or build a front end of your own."},
		},
		KindsTitle:  "What a topic can hold",
		Kinds:       []string{"Rich text", "Images", "Audio", "Video", "PDF", "Embedded media", "H5P", "Projects"},
		TenantTitle: "One platform, many schools",
		TenantText: "Every organisation on the platform has a separate database, separate signing keys and its own " +
			"settings. A sign-in at one school never opens a door at another.",
		Footer: "Runs on one machine with zero configuration, and scales out when you need it to.",
	},
	"pl": {
		Lang:    "pl",
		Title:   "Platforma do nauki, która nie przeszkadza w nauce",
		Tagline: "Kursy, lekcje i postępy — dla każdej szkoły, którą prowadzisz",
		Lead: "Twórz kursy z lekcji i tematów, dodawaj teksty, zdjęcia, nagrania, filmy, pliki PDF i interaktywne " +
			"ćwiczenia H5P, a postępy uczniów zapiszą się same. Każda szkoła ma własną przestrzeń, własne dane " +
			"i własny adres.",
		Browse: "Przeglądaj kursy",
		SignIn: "Zaloguj się",
		Features: []feature{
			{"Kursy o przejrzystej budowie", "Lekcje porządkują materiał, a tematy prowadzą ucznia krok po kroku — " +
				"od pierwszego wyjaśnienia aż po zadanie końcowe."},
			{"Każdy rodzaj treści", "Tekst, ilustracje, dźwięk, wideo, dokumenty PDF, osadzone materiały, projekty " +
				"do oddania i ćwiczenia H5P w jednym programie kursu."},
			{"Postępy zapisują się same", "Platforma odnotowuje, co zostało przeczytane, obejrzane i ukończone, więc " +
				"uczeń zawsze wie, gdzie skończył, a nauczyciel widzi, jak idzie całej grupie."},
			{"Otwarta z założenia", "Wszystko, co robią te strony, przechodzi przez udokumentowane API — możesz " +
				"podłączyć własne narzędzia albo zbudować własny interfejs."},
		},
		KindsTitle:  "Co może zawierać temat",
		Kinds:       []string{"Tekst", "Obrazy", "Nagrania audio", "Wideo", "PDF", "Osadzone materiały", "H5P", "Projekty"},
		TenantTitle: "Jedna platforma, wiele szkół",
		TenantText: "Każda organizacja ma osobną bazę danych, osobne klucze podpisujące i własne ustawienia. " +
			"Logowanie w jednej szkole nigdy nie otwiera drzwi do innej.",
		Footer: "Działa na jednym komputerze bez żadnej konfiguracji i rośnie razem z Tobą, gdy zajdzie potrzeba.",
	},
	"zh": {
		Lang:    "zh",
		Title:   "专心学习，不被平台打扰",
		Tagline: "课程、课时与学习进度——服务你管理的每一所学校",
		Lead: "用课时和主题搭建课程，加入文字、图片、音频、视频、PDF 和 H5P 互动练习，学员的学习进度会自动记录。" +
			"每所学校都拥有独立的空间、独立的数据和自己的网址。",
		Browse: "浏览课程",
		SignIn: "登录",
		Features: []feature{
			{"结构清晰的课程", "课时把内容组织起来，主题带着学员一步一步往前走，从第一段讲解一直到最后的作业。"},
			{"各种内容都能放", "文字、图片、音频、视频、PDF 文档、嵌入式媒体、作业提交和 H5P 互动练习，都能放进同一份课程大纲。"},
			{"进度自动保存", "平台会记下学员读过、看过和完成的内容，学员随时知道自己学到了哪里，老师也能看清每个人的进展。"},
			{"天生开放", "这些页面上的每个操作都通过有文档的 API 完成，你可以接入自己的工具，也可以开发自己的前端。"},
		},
		KindsTitle:  "一个主题可以包含",
		Kinds:       []string{"富文本", "图片", "音频", "视频", "PDF", "嵌入式媒体", "H5P", "作业"},
		TenantTitle: "一个平台，多所学校",
		TenantText:  "平台上的每个机构都有独立的数据库、独立的签名密钥和自己的设置。在一所学校登录，绝不会打开另一所学校的大门。",
		Footer:      "一台机器即可运行，无需任何配置；需要扩展时，也能随时扩展。",
	},
}

type landingData struct {
	Text  landingText
	Links []struct{ Lang, Path, Name string }
}

// landing serves the platform landing in one language, on the platform
// host only: tenant hosts answer 404 at /pl/ and /zh/ (and show their
// catalogue at /).
func (h *Handler) landing(lang string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.isPlatformHost(r) {
			h.notFound(w, r)
			return
		}
		t := landings[lang]
		h.render(w, r, http.StatusOK, "landing", view{Title: t.Title, Lang: lang, Nav: "home",
			SignedIn: h.readSession(r) != nil, Data: landingData{Text: t, Links: landingLinks}})
	}
}
