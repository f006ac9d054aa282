package demo

import (
	"context"
	"encoding/base64"
	"fmt"
	"html"
	"slices"
	"strconv"
	"sync"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/demo/cmi5demo"
	"github.com/lms-platform/lms/internal/demo/media"
	"github.com/lms-platform/lms/internal/demo/quickcheck"
	"github.com/lms-platform/lms/internal/demo/scormdemo"
	"github.com/lms-platform/lms/internal/demo/simdemo"
	"github.com/lms-platform/lms/internal/kinds/layout"
	"github.com/lms-platform/lms/internal/kinds/quiz"
)

// The demo courses: short, real lessons a newcomer can learn something
// from while they try every kind of topic the platform has. Media are made
// by package media when the seed runs.

// course is a demo course as the seed creates it.
type course struct {
	Title       string
	Summary     string
	Description string
	Level       string
	Tags        []string
	Public      bool
	Cover       func() []byte
	Lessons     []lesson
}

type lesson struct {
	Title    string
	Summary  string
	Duration string
	Topics   []topic
}

// Topic kinds of the seed.
const (
	kindText    = "richtext"
	kindImage   = "image"
	kindPDF     = "pdf"
	kindAudio   = "audio"
	kindVideo   = "video"
	kindProject = "project"
	kindQuiz    = "quiz"
	// kindH5P topics play a quiz of package quickcheck, generated when the
	// seed runs.
	kindH5P = "h5p"
	// kindLayout topics are built from approved components (Layout); the
	// Markdown is their fallback.
	kindLayout = "layout"
	// kindScorm topics play the SCORM 1.2 package of package scormdemo,
	// generated when the seed runs.
	kindScorm = "scorm"
	// kindInteractive topics play the canvas simulation of package
	// simdemo, generated when the seed runs; Markdown is the lesson text.
	kindInteractive = "interactive"
	// kindLiaScript topics play their Markdown (a LiaScript course) in
	// LiaScript's runtime.
	kindLiaScript = "liascript"
	// kindCmi5 topics play the cmi5 course of package cmi5demo,
	// generated when the seed runs.
	kindCmi5 = "cmi5"
)

type topic struct {
	Kind     string
	Title    string
	Summary  string
	Duration string
	Preview  bool
	// Markdown is the text of a rich text topic, or the instructions of
	// a project.
	Markdown string
	// File makes the file of an image, PDF or audio topic.
	File     func() []byte
	FileName string
	// Film is the video of a video topic, made when the seed runs.
	Film *film
	// Accept lists the file types a project takes.
	Accept string
	// Quiz is the content of an H5P topic; FileName names its package.
	Quiz *quickcheck.Quiz
	// Layout is the document of a layout topic.
	Layout []client.PostAdminTopicsBodyDocumentItem
	// GIFT are the questions of a quiz topic, one each; the quiz is timed
	// by the tenant's lms_gift_quiz.max_quiz_time and passes with
	// PassScore points.
	GIFT      []string
	PassScore float64
}

// quizMinutes is the time limit of the demo's timed quiz, which its
// duration states. The limit is the tenant's lms_gift_quiz.max_quiz_time,
// one for every quiz (60 minutes by default): the seed sets it to this
// (quizSettings), so the timer runs the time the quiz's label promises.
const quizMinutes = 5

// hasQuiz tells whether a course holds a quiz topic.
func hasQuiz(c course) bool {
	for _, l := range c.Lessons {
		for _, tp := range l.Topics {
			if tp.Kind == kindQuiz {
				return true
			}
		}
	}
	return false
}

// quizSettings sets the demo tenant's quiz time limit to quizMinutes.
func quizSettings(ctx context.Context, api *client.Client) error {
	_, err := api.PostAdminConfig(ctx, client.UpdateInputBody{Config: []client.Item{{Key: quiz.TimeSetting, Value: quizMinutes}}})
	if err != nil {
		return fmt.Errorf("demo: quiz settings: %w", err)
	}
	return nil
}

// figure embeds a picture in rich text as a data URI, which the rich text
// sanitiser keeps, so the text needs no other file. The sanitiser keeps
// alt texts of letters, digits and plain punctuation (no ; or :).
func figure(png []byte, alt, caption string) string {
	return fmt.Sprintf(`<figure><img src="data:image/png;base64,%s" alt="%s"><figcaption>%s</figcaption></figure>`,
		base64.StdEncoding.EncodeToString(png), html.EscapeString(alt), html.EscapeString(caption))
}

// demoCourses are the demo courses (not the H5P exercises), made once per
// process with the pictures, documents and sounds their files make, also
// once: they come out the same each time, and each reset of a demo tenant
// seeds them again.
func demoCourses() []course { return slices.Clone(keptCourses()) }

var keptCourses = sync.OnceValue(func() []course {
	list := []course{gettingStarted(), dataPrivacy(), photography(), studyHabits()}
	for i := range list {
		c := &list[i]
		if c.Cover != nil {
			c.Cover = sync.OnceValue(c.Cover)
		}
		for _, l := range c.Lessons {
			for j := range l.Topics {
				if tp := &l.Topics[j]; tp.File != nil {
					tp.File = sync.OnceValue(tp.File)
				}
			}
		}
	}
	return list
})

func gettingStarted() course {
	return course{
		Title:   "Getting started with the platform",
		Summary: "A ten-minute tour: how courses are organised, how your progress is kept, and what each kind of topic looks like.",
		Description: "Start here. This short course shows you around: the catalogue, your courses and your progress, " +
			"and one example of every kind of topic you will meet in other courses: text, pictures, documents, " +
			"audio, video and a small project of your own.",
		Level: "beginner", Tags: []string{"onboarding", "platform"}, Public: true,
		Cover: func() []byte { return media.Cover("Getting started", "#1d4ed8", "#0ea5e9", media.Cards) },
		Lessons: []lesson{
			{Title: "Welcome", Summary: "What a course is made of and how your progress is saved.", Duration: "5 min",
				Topics: []topic{
					{Kind: kindText, Title: "How this platform works", Duration: "3 min", Preview: true,
						Summary: "Courses, lessons and topics, and how you move through them.",
						Markdown: "Welcome! This is a demo of the learning platform. Everything here is real: you can " +
							"open courses, complete topics and hand in work. The demo is reset regularly, so feel " +
							"free to click anything.\n\n" +
							"## Courses, lessons and topics\n\n" +
							figure(media.CourseMap(), "A course holds lessons, and each lesson holds topics.",
								"A course is a tree: lessons, and topics inside them.") + "\n\n" +
							"- A **course** is a complete piece of learning with a clear goal, such as the one you are in now.\n" +
							"- A course is split into **lessons**. Each lesson covers one idea and takes a few minutes.\n" +
							"- A lesson holds **topics**: a page of text, a picture, a document, a recording, a video, " +
							"an interactive exercise or a task to hand in.\n\n" +
							"## Your progress\n\n" +
							"Open a topic and the platform notes that you started it and how long you spent on it. " +
							"Reading topics count as done once you have read them; exercises complete themselves when " +
							"you finish them; projects complete when you hand in your work. A lesson is finished when " +
							"its topics are, and the course when all its lessons are.\n\n" +
							"> **Tip:** you can stop at any time. When you come back, the course opens where you left off.",
					},
					{Kind: kindImage, Title: "The map of a course", Duration: "1 min", FileName: "course-map.png",
						Summary: "The same structure as a picture: keep it in mind when you open a new course.",
						File:    media.CourseMap},
					{Kind: kindAudio, Title: "Sound check", Duration: "1 min", FileName: "sound-check.ogg",
						Summary: "Press play: you should hear three rising notes. If you hear nothing, check your " +
							"volume and your device's output before you start a course with recordings.",
						File: func() []byte { return media.Chime([]float64{523.25, 659.25, 783.99}, 0.45) }},
				}},
			{Title: "Finding your way", Summary: "The catalogue, your courses and your progress.", Duration: "5 min",
				Topics: []topic{
					{Kind: kindText, Title: "Catalogue, my courses and progress", Duration: "3 min",
						Summary: "Where to find courses and how to see how far you have come.",
						Markdown: "## The catalogue\n\n" +
							"The catalogue lists the courses that are open to you. Search by title, or filter by tag " +
							"to find courses on one subject. Each course page shows its summary, its level and who " +
							"teaches it.\n\n" +
							"## My courses\n\n" +
							"Courses you have been given access to, or started, appear under **My courses**. Some " +
							"courses have a deadline: it is shown on the course and you get a reminder a few days " +
							"before it.\n\n" +
							"## Progress\n\n" +
							"Your progress page shows, for every course, how many topics you have finished and how " +
							"much time you have spent. Finishing a course is recorded too, and some courses send a " +
							"certificate when you do.\n\n" +
							"| You want to… | Go to |\n|---|---|\n" +
							"| find something new to learn | the catalogue |\n" +
							"| continue where you stopped | my courses |\n" +
							"| see what you have done | my progress |",
					},
					{Kind: kindPDF, Title: "Quick start guide", Duration: "2 min", FileName: "quick-start-guide.pdf",
						Summary: "A one-page guide to keep or print.", File: quickStartGuide},
				}},
			{Title: "Try it yourself", Summary: "A video, a first piece of work to hand in and a quick check of what you learned.",
				Duration: "15 min",
				Topics: []topic{
					{Kind: kindVideo, Title: "Watch: how your progress grows", Duration: "1 min", Film: progressFilm,
						FileName: "progress.mov",
						Summary: "A short film with a voice-over: each topic you finish moves your progress bar. " +
							"Uploaded videos are prepared for streaming at several qualities, and your browser " +
							"picks the one your connection can carry. Play it to the end to complete the topic."},
					{Kind: kindProject, Title: "Introduce yourself", Duration: "5 min", Accept: ".txt .md .pdf .docx .odt",
						Summary: "Your first hand-in: a few lines about you.",
						Markdown: "Write a few lines about yourself and hand them in as a file:\n\n" +
							"1. Who you are and what you do.\n" +
							"2. One thing you would like to learn on this platform.\n" +
							"3. How you like to learn: reading, watching, or trying things out.\n\n" +
							"Save it as a text, PDF or word-processor file and upload it below. Handing it in " +
							"completes this topic, and your tutor can read it.",
					},
					{Kind: kindLayout, Title: "How topics complete", Duration: "3 min",
						Summary: "A lesson built from learning components, with a question to check yourself.",
						Markdown: "# How topics complete\n\nEach kind of topic counts as done in its own way: " +
							"reading to the end, playing to the end, finishing an exercise or handing in your work.",
						Layout: howTopicsComplete()},
					{Kind: kindH5P, Title: "Quick check: what did you learn?", Duration: "3 min", FileName: "quick-check.h5p",
						Summary: "Four questions on this course. Answer them all and check: finishing the quiz " +
							"completes the topic.",
						Quiz: gettingStartedQuiz()},
					{Kind: kindQuiz, Title: "Timed quiz: the platform", Duration: strconv.Itoa(quizMinutes) + " min", PassScore: 3,
						Summary: "Four questions of different kinds against the clock. Your answers are saved as you " +
							"give them; score 3 points of 4 to pass and complete the topic.",
						Markdown: "Answer the four questions, then **hand in**. You can come back to an attempt under " +
							"way until its time runs out.",
						GIFT: []string{
							"::Lessons:: A course is split into lessons, and each lesson holds topics. {T}",
							"::Projects:: When is a project topic complete? {\n=When you hand in your work\n~As soon as you open it\n~When you have read its instructions}",
							"::Where:: Which page lists the courses you have started? {=My learning =%50%my courses}",
							"::Count:: How many questions does this quiz have? {#4}",
						}},
				}},
		},
	}
}

// howTopicsComplete is the demo's layout lesson: one of several
// components and a practice question, whose answer only the API knows.
func howTopicsComplete() []client.PostAdminTopicsBodyDocumentItem {
	node := func(component string, props any) client.PostAdminTopicsBodyDocumentItem {
		return client.PostAdminTopicsBodyDocumentItem{Component: component, Props: props}
	}
	return []client.PostAdminTopicsBodyDocumentItem{
		node("Callout", layout.CalloutProps{Tone: "tip", Title: "Why it matters",
			Body: "Your progress page counts the topics you have finished, so it helps to know when a topic is done."}),
		node("ComparisonTable", layout.ComparisonTableProps{Caption: "When each kind of topic is complete",
			Columns: []string{"Complete when"},
			Rows: []layout.ComparisonRow{{Label: "Reading", Cells: []string{"you have scrolled to its end"}},
				{Label: "Video or recording", Cells: []string{"it has played to the end"}},
				{Label: "Exercise", Cells: []string{"you have finished it"}},
				{Label: "Project", Cells: []string{"you have handed in your work"}}}}),
		node("FlipCards", layout.FlipCardsProps{Cards: []layout.FlipCard{
			{Front: "Can you stop in the middle of a course?", Back: "Yes: the course opens where you left off."},
			{Front: "Where do you see what you have finished?", Back: "On your progress page."}}}),
		node("PracticeActivity", layout.PracticeActivityProps{Title: "Check yourself", Questions: []layout.PracticeQuestion{{
			Prompt: "When is a project topic complete?",
			Options: []layout.PracticeOption{{Text: "As soon as you open it"}, {Text: "When you have read its instructions"},
				{Text: "When you hand in your work", Correct: true}},
			Hints:    []string{"Think of what a tutor needs from you."},
			Solution: "A project counts once your work is handed in, so that your tutor can read it."}}}),
	}
}

// gettingStartedQuiz asks about what the course "Getting started with the
// platform" teaches; the demo's H5P exercise, played by our own content
// type, so the demo needs no H5P package from elsewhere.
func gettingStartedQuiz() *quickcheck.Quiz {
	return &quickcheck.Quiz{
		Title: "Quick check: what did you learn?",
		Intro: "Four short questions about this course. Pick one answer for each, then check.",
		Questions: []quickcheck.Question{
			{Text: "What does a lesson hold?", Correct: 1,
				Answers: []string{"Other courses", "Topics: texts, pictures, documents, recordings, videos, exercises and tasks",
					"Only videos"},
				Explanation: "A course is split into lessons, and each lesson holds topics."},
			{Text: "When is a project topic complete?", Correct: 2,
				Answers:     []string{"As soon as you open it", "When you have read its instructions", "When you hand in your work"},
				Explanation: "Reading topics count once you have read them, exercises when you finish them, projects when you hand in your work."},
			{Text: "Where do you find the courses you have been given access to, or started?", Correct: 0,
				Answers:     []string{"My courses", "My progress", "The quick start guide"},
				Explanation: "My progress shows how far you have come; the catalogue is where you find new courses."},
			{Text: "You stop halfway through a course. What happens when you come back?", Correct: 1,
				Answers: []string{"You start again from the first lesson", "The course opens where you left off",
					"Your progress is lost after a day"},
				Explanation: "Your progress is kept, so you can stop at any time."},
		},
	}
}

func quickStartGuide() []byte {
	d := &media.Document{Title: "Quick start guide", Subtitle: "Getting started with the platform", Accent: "#1d4ed8"}
	d.Heading("1. Find a course")
	d.Paragraph("Open the catalogue and search by title or tag. A course page tells you what you will learn, " +
		"how long it takes and who teaches it.")
	d.Heading("2. Learn at your pace")
	d.Bullets(
		"Work through the lessons in order; each takes a few minutes.",
		"Reading topics count as done once you have read them.",
		"Exercises complete themselves when you finish them.",
		"Projects complete when you hand in your work.",
	)
	d.Heading("3. Keep track")
	d.Paragraph("My courses lists everything you are enrolled in. My progress shows the topics you have finished " +
		"and the time you have spent. Deadlines, when a course has one, are shown on the course, and you are " +
		"reminded before they pass.")
	d.Heading("Before you start")
	d.Checklist(
		"I can log in and see the catalogue.",
		"I heard the three notes of the sound check.",
		"I know where My courses and My progress are.",
	)
	return d.PDF()
}

func dataPrivacy() course {
	return course{
		Title:   "Introduction to data privacy",
		Summary: "What personal data is, the principles that protect it, and everyday habits that keep it safe at work.",
		Description: "Almost every job touches personal data: customer lists, staff records, e-mails, photos. " +
			"This course explains in plain words what counts as personal data, the principles data protection " +
			"laws such as the GDPR are built on, and the habits that prevent most incidents. It takes about " +
			"thirty minutes and ends with a short exercise on your own work.",
		Level: "beginner", Tags: []string{"privacy", "security", "compliance"},
		Cover: func() []byte { return media.Cover("Data privacy", "#0f766e", "#134e4a", media.Padlock) },
		Lessons: []lesson{
			{Title: "What personal data is", Summary: "Identifiers, special categories and why they matter.", Duration: "10 min",
				Topics: []topic{
					{Kind: kindText, Title: "Personal data, in plain words", Duration: "5 min", Preview: true,
						Summary: "Anything that tells you who someone is, directly or not.",
						Markdown: "**Personal data** is any information about a person who can be identified, " +
							"directly or indirectly. A name is personal data, but so is an e-mail address, a phone " +
							"number, a photo, an IP address or a customer number: anything that, alone or combined " +
							"with other information, points to one person.\n\n" +
							figure(media.Identifiers(), "A person surrounded by identifiers such as name, e-mail, "+
								"phone, address, IP address, photo, ID number and location.",
								"Many kinds of data identify a person, not only their name.") + "\n\n" +
							"## Direct and indirect\n\n" +
							"Some data identifies someone on its own (a full name with a date of birth). Other " +
							"data does so only when combined: *\"the only woman in the Lisbon sales team\"* names " +
							"nobody, yet everyone in the company knows who it is.\n\n" +
							"## Anonymous is harder than it looks\n\n" +
							"Data is anonymous only if nobody can reasonably work out who it is about. Removing " +
							"the name is rarely enough: a postcode, a birth date and a gender together identify " +
							"most people. Data whose names are replaced by codes is **pseudonymised**, and it is " +
							"still personal data.\n\n" +
							"**Check yourself:** is a car's number plate personal data? *Yes, as soon as the " +
							"owner can be looked up.*",
					},
					{Kind: kindText, Title: "Special categories", Duration: "4 min",
						Summary: "The data that can hurt people most when it leaks, and needs extra care.",
						Markdown: "Some personal data can cause serious harm if it is misused: discrimination, " +
							"exclusion, even danger. Data protection law calls these **special categories** and " +
							"allows their use only in narrow cases, with extra safeguards:\n\n" +
							"- health, including sick notes and disabilities;\n" +
							"- racial or ethnic origin;\n" +
							"- political opinions, religious or philosophical beliefs;\n" +
							"- trade union membership;\n" +
							"- genetic and biometric data, such as fingerprints used to unlock a door;\n" +
							"- sex life and sexual orientation.\n\n" +
							"Data about criminal convictions is protected in a similar way.\n\n" +
							"## What this means for you\n\n" +
							"If your work involves any of these, keep them apart from everyday files, share them " +
							"only with people who need them for a defined task, and ask before you collect more.",
					},
				}},
			{Title: "The principles", Summary: "Seven ideas behind every data protection rule.", Duration: "10 min",
				Topics: []topic{
					{Kind: kindText, Title: "Seven principles of data protection", Duration: "6 min",
						Summary: "Lawful, limited, minimal, accurate, kept short, secure, accountable.",
						Markdown: "Most data protection laws, the European GDPR among them, rest on the same " +
							"principles. If you remember these, you can answer most everyday questions yourself.\n\n" +
							"1. **Lawfulness, fairness and transparency.** Have a legal reason to use the data, " +
							"and tell people what you do with it.\n" +
							"2. **Purpose limitation.** Collect data for a clear purpose and do not reuse it for " +
							"something unrelated.\n" +
							"3. **Data minimisation.** Collect only what the purpose needs. If a form works without " +
							"the birth date, do not ask for it.\n" +
							"4. **Accuracy.** Keep data correct and up to date; fix mistakes when you learn of them.\n" +
							"5. **Storage limitation.** Keep data only as long as the purpose needs, then delete it.\n" +
							"6. **Integrity and confidentiality.** Protect data against loss, theft and prying eyes.\n" +
							"7. **Accountability.** Be able to show that you follow the other six.\n\n" +
							"## Rights of the people you hold data about\n\n" +
							"People may ask to see the data you hold about them, have it corrected or deleted, " +
							"object to some uses, and take it elsewhere. Pass such requests on quickly: the law " +
							"sets deadlines, usually one month.",
					},
					{Kind: kindImage, Title: "The life of personal data", Duration: "1 min", FileName: "data-lifecycle.png",
						Summary: "Collected, used, stored and finally deleted: at every step, the purpose decides.",
						File:    media.DataLifecycle},
					{Kind: kindPDF, Title: "Privacy checklist for small teams", Duration: "3 min",
						FileName: "privacy-checklist.pdf", Summary: "A one-page checklist to go through with your team.",
						File: privacyChecklist},
				}},
			{Title: "Privacy in everyday work", Summary: "Habits that prevent most incidents.", Duration: "15 min",
				Topics: []topic{
					{Kind: kindText, Title: "Habits that protect data", Duration: "6 min",
						Summary: "Passwords, phishing, sharing, and what to do when something goes wrong.",
						Markdown: "Most data breaches do not need a clever attacker: a lost laptop, a mistyped " +
							"e-mail address or a reused password is enough. A few habits prevent most of them.\n\n" +
							"## Passwords and devices\n\n" +
							"- Use a password manager and a different password for every service.\n" +
							"- Turn on two-step login wherever it is offered.\n" +
							"- Lock your screen when you leave your desk, and keep devices updated.\n\n" +
							"## E-mail and phishing\n\n" +
							"- Be suspicious of urgent messages asking you to log in, pay or open an attachment.\n" +
							"- Check the sender's address, not just the name shown.\n" +
							"- Before sending personal data, check the recipient, and prefer a shared folder with " +
							"access control to an attachment.\n\n" +
							"## Sharing\n\n" +
							"- Share with the people who need the data for the task, and no one else.\n" +
							"- Remove access when a project ends or someone changes role.\n\n" +
							"## When something goes wrong\n\n" +
							"Report a lost device, a wrong recipient or a suspicious message **at once**, even if " +
							"you are not sure it matters. Many laws require serious breaches to be reported to the " +
							"authority within 72 hours, and early reports limit the damage.",
					},
					{Kind: kindProject, Title: "Map the personal data of one process", Duration: "10 min",
						Accept:  ".txt .md .pdf .docx .odt .xlsx .ods .csv",
						Summary: "Apply the principles to something you do every week.",
						Markdown: "Pick one process from your own work, such as handling a customer enquiry, " +
							"onboarding a new colleague or sending a newsletter, and write down:\n\n" +
							"1. Which personal data the process uses, and where it comes from.\n" +
							"2. The purpose of each piece of data. Is any of it not needed?\n" +
							"3. Where the data is stored and who can see it.\n" +
							"4. When it is deleted, or when it should be.\n" +
							"5. One change that would make the process safer.\n\n" +
							"A table or a short list is enough. Upload it as a document or spreadsheet.",
					},
				}},
		},
	}
}

func privacyChecklist() []byte {
	d := &media.Document{Title: "Privacy checklist for small teams", Subtitle: "Introduction to data privacy",
		Accent: "#0f766e"}
	d.Paragraph("Go through this list once a quarter. Every box you cannot tick is a small project for the " +
		"coming weeks.")
	d.Heading("Know your data")
	d.Checklist(
		"We have a list of the personal data we hold, where it is and why we have it.",
		"We know which of it belongs to the special categories (health, beliefs, biometrics...).",
		"Every form asks only for what its purpose needs.",
	)
	d.Heading("Keep it safe")
	d.Checklist(
		"Everyone uses a password manager and two-step login for work accounts.",
		"Laptops and phones are encrypted, locked automatically and kept up to date.",
		"Access to shared folders is reviewed when people join, move or leave.",
	)
	d.Heading("Keep it short")
	d.Checklist(
		"Each kind of data has a retention period, and old data is deleted on time.",
		"Backups follow the same rules as the data they hold.",
	)
	d.Heading("Be ready")
	d.Checklist(
		"Everyone knows whom to tell about a lost device or a wrong recipient.",
		"We can answer a request to see or delete someone's data within a month.",
	)
	return d.PDF()
}

// studyHabits is a small course of one packaged SCORM 1.2 activity, as
// authoring tools export them.
func studyHabits() course {
	return course{
		Title:   "Packaged course: study habits (SCORM)",
		Summary: "A short packaged activity on two study habits, with a question at the end. It remembers where you stopped.",
		Description: "Schools and companies often bring courses as SCORM packages made with an authoring tool. This " +
			"one plays such a package: leave it half-way and it takes you back to the same page next time. The second lesson is " +
			"a package in the newer cmi5 format, which reports to the platform's own learning record store.",
		Level: "beginner", Tags: []string{"scorm", "cmi5", "study skills"}, Public: true,
		Cover: func() []byte { return media.Cover("Study habits", "#065f46", "#34d399", media.Cards) },
		Lessons: []lesson{
			{Title: "Study habits", Summary: "Spacing and self-testing, in three pages.", Duration: "4 min",
				Topics: []topic{
					{Kind: kindScorm, Title: scormdemo.Title, Duration: "4 min", FileName: "study-habits.zip",
						Summary: "A SCORM 1.2 activity: read two pages, then answer one question."},
					{Kind: kindLiaScript, Title: "Check yourself (LiaScript)", Duration: "3 min", Markdown: habitsLesson,
						Summary: "A short lesson written in LiaScript's Markdown: visit its sections and solve both quizzes."},
				}},
			{Title: "Check yourself", Summary: "The same kind of package in the newer cmi5 format.", Duration: "1 min",
				Topics: []topic{
					{Kind: kindCmi5, Title: cmi5demo.Title, Duration: "1 min", FileName: "study-habits-cmi5.zip",
						Summary: "A cmi5 activity: answer one question; a right answer passes."},
				}},
		},
	}
}

// habitsLesson is a short LiaScript course: its header comment, three
// sections and two quizzes (single choice and text), played by
// LiaScript's own runtime.
const habitsLesson = `<!--
author:   LMS demo
version:  1.0.0
language: en
narrator: US English Female
comment:  Check what you remember about spacing and self-testing.
-->

# Check yourself: study habits

This lesson is written in [LiaScript](https://liascript.github.io)'s Markdown and played by LiaScript itself.
Move through the sections with the arrows below or the table of contents; each quiz is checked as you answer.

## Spacing

Spreading your study over several short sessions is called **spacing**. Each time you come back,
you have to recall a little, and that effort is what makes memories last.

Which plan helps you remember more a month later?

[( )] Three hours of study the evening before the test
[(X)] Three sessions of one hour, a few days apart
[( )] It makes no difference

## Self-testing

Closing the book and writing down what you remember is **retrieval practice**: it strengthens
memory more than reading the same page again.

What is recalling without looking called? Type the first word of its name.

[[retrieval]]

## What next

Plan your next week: put two short review sessions in your calendar, and start each one by writing
down what you remember before you open your notes.
`

func photography() course {
	return course{
		Title:   "Basics of photography",
		Summary: "Understand exposure, compose stronger pictures and practise with a short photo assignment.",
		Description: "Whether you use a phone or a camera, better photos start with two things: controlling " +
			"light and arranging what is in the frame. This course explains the exposure triangle, how to read " +
			"light, and the composition guides photographers use every day, then sends you out with a small " +
			"assignment.",
		Level: "beginner", Tags: []string{"photography", "creative"},
		Cover: func() []byte { return media.Cover("Photography", "#7c2d12", "#f59e0b", media.Aperture) },
		Lessons: []lesson{
			{Title: "Light and exposure", Summary: "Aperture, shutter speed and ISO, and the light you work with.", Duration: "12 min",
				Topics: []topic{
					{Kind: kindText, Title: "The exposure triangle", Duration: "6 min", Preview: true,
						Summary: "Three settings decide how bright a photo is, and each has a side effect.",
						Markdown: "A photo's **exposure** is how much light reaches the sensor. Three settings " +
							"control it, and each one also changes the picture in its own way.\n\n" +
							figure(media.ExposureTriangle(), "A triangle with aperture, shutter and ISO at its corners.",
								"The exposure triangle: change one setting and another must move to keep the same brightness.") + "\n\n" +
							"## Aperture: how wide the lens opens\n\n" +
							"Written as an f-number: **f/1.8** is wide open, **f/16** is small. A wide aperture " +
							"lets in more light and gives a shallow **depth of field**: the subject is sharp and the " +
							"background soft, ideal for portraits. A small aperture keeps everything sharp, as " +
							"landscapes need.\n\n" +
							"## Shutter speed: how long the light comes in\n\n" +
							"A fast shutter (**1/1000 s**) freezes motion; a slow one (**1/15 s**) lets moving " +
							"things blur, and needs a steady hand or a tripod. As a rule of thumb, hand-held shots " +
							"stay sharp down to about 1/focal-length seconds.\n\n" +
							"## ISO: how sensitive the sensor is\n\n" +
							"Low ISO (**100**) gives the cleanest image. High ISO (**3200** and above) rescues dark " +
							"scenes but adds **noise**, a grainy texture.\n\n" +
							"## Putting it together\n\n" +
							"Opening the aperture by one stop doubles the light; to keep the same exposure, halve " +
							"the shutter time or the ISO. Choose first the setting whose side effect matters most " +
							"for the picture, then balance the other two.",
					},
					{Kind: kindText, Title: "Reading the light", Duration: "5 min",
						Summary: "Direction, quality and colour of light, and the golden hour.",
						Markdown: "Before you press the shutter, look at the light itself.\n\n" +
							"- **Direction.** Light from the front flattens a face; from the side it shows shape " +
							"and texture; from behind it outlines the subject and can make a silhouette.\n" +
							"- **Quality.** A small, bright source (the midday sun, a bare bulb) gives hard light " +
							"with sharp shadows. A large source (an overcast sky, a window) gives soft light that " +
							"flatters people.\n" +
							"- **Colour.** Morning and evening light is warm, shade and overcast light is cool. " +
							"Your camera's white balance can correct it, or you can keep it for the mood.\n\n" +
							"The hour after sunrise and before sunset, the **golden hour**, brings low, warm, soft " +
							"light from the side: the easiest light there is. Midday sun is the hardest; move your " +
							"subject into open shade.",
					},
					{Kind: kindInteractive, Title: simdemo.Title, Duration: "5 min", FileName: "exposure-simulator.zip",
						Summary: "Try the three settings on a simulated camera and see what each one does to the picture.",
						Markdown: "Move each slider and watch the picture: the **aperture** blurs the trees behind the ball, " +
							"the **shutter speed** streaks the ball as it flies, and **ISO** adds grain. Finish the last step " +
							"with a well-exposed picture to complete this topic.",
					},
				}},
			{Title: "Composition", Summary: "Where to put things in the frame.", Duration: "15 min",
				Topics: []topic{
					{Kind: kindText, Title: "The rule of thirds and other guides", Duration: "6 min",
						Summary: "Simple guides that make pictures easier to read.",
						Markdown: "Composition is how you arrange what is in the frame so the viewer's eye knows " +
							"where to go.\n\n" +
							figure(media.RuleOfThirds(), "A landscape with a grid of thirds, the sun and a tree on its lines.",
								"The tree stands on a vertical third and the sun on a crossing point; the horizon follows the lower line.") + "\n\n" +
							"## The rule of thirds\n\n" +
							"Imagine the frame divided by two horizontal and two vertical lines. Placing the " +
							"subject on a line, or where two lines cross, usually looks more lively than the dead " +
							"centre. Put the horizon on the upper or lower line, not across the middle. Most phone " +
							"cameras can show this grid for you.\n\n" +
							"## Other guides\n\n" +
							"- **Leading lines:** roads, fences and rivers that lead the eye to the subject.\n" +
							"- **Framing:** a doorway or branches around the subject.\n" +
							"- **Negative space:** empty sky or wall that lets the subject breathe.\n" +
							"- **Fill the frame:** step closer and leave out what does not help.\n\n" +
							"These are guides, not laws. Once you know them, break them on purpose: a subject in " +
							"the exact centre can look calm and strong.",
					},
					{Kind: kindVideo, Title: "Watch: the rule of thirds in motion", Duration: "2 min", Film: thirdsFilm,
						FileName: "rule-of-thirds.mov",
						Summary: "The sun crosses a landscape under the grid of thirds. Pause where it meets a " +
							"crossing of the lines, and again in the middle of the frame: which picture feels " +
							"balanced, and which feels still? Where does the tree stand?"},
				}},
			{Title: "Practice", Summary: "Go out and take pictures.", Duration: "30 min",
				Topics: []topic{
					{Kind: kindPDF, Title: "Field card: settings at a glance", Duration: "2 min", FileName: "field-card.pdf",
						Summary: "Starting settings for common situations, to keep on your phone.", File: fieldCard},
					{Kind: kindProject, Title: "One subject, three ways", Duration: "30 min", Accept: ".jpg .jpeg .png .pdf .zip",
						Summary: "Your photo assignment.",
						Markdown: "Choose one subject near you: a plant, a cup, a building, a person who agrees to " +
							"pose. Take three photos of it:\n\n" +
							"1. **Light:** one with light from the side, showing shape and texture.\n" +
							"2. **Thirds:** one with the subject on a third of the frame.\n" +
							"3. **Your choice:** one that breaks a rule on purpose.\n\n" +
							"Under each, write one sentence on what you tried. Upload the three pictures as JPEG " +
							"or PNG files, or together in a PDF or ZIP file.",
					},
				}},
		},
	}
}

func fieldCard() []byte {
	d := &media.Document{Title: "Field card: settings at a glance", Subtitle: "Basics of photography", Accent: "#b45309"}
	d.Paragraph("Starting points, not rules: take a picture, look at it, adjust.")
	d.Heading("Portrait, soft background")
	d.Bullets("Aperture f/1.8 to f/2.8", "Shutter 1/250 s or faster", "ISO as low as the light allows",
		"Focus on the nearest eye")
	d.Heading("Landscape, sharp throughout")
	d.Bullets("Aperture f/8 to f/11", "ISO 100", "Shutter as the light requires; use a tripod below 1/60 s",
		"Horizon on a third")
	d.Heading("Moving subjects")
	d.Bullets("Shutter 1/1000 s to freeze, 1/30 s while panning to blur the background",
		"Continuous focus and burst mode")
	d.Heading("Low light indoors")
	d.Bullets("Widest aperture", "Shutter no slower than 1/60 s hand-held", "Raise ISO to 1600-3200; accept some noise",
		"Brace yourself against a wall or table")
	d.Heading("Before you leave")
	d.Checklist("Battery charged", "Memory card empty", "Lens clean", "Grid lines turned on")
	return d.PDF()
}

// exercisesCourse holds the H5P packages of the content directory.
func exercisesCourse() course {
	return course{
		Title:   "Interactive exercises",
		Summary: "Short interactive activities: answer, drag and drop, and get instant feedback.",
		Description: "A sample of interactive exercises made with H5P, an open format for interactive learning " +
			"content. Each exercise completes the topic when you finish it.",
		Level: "beginner", Tags: []string{"interactive", "h5p"},
		Cover: func() []byte { return media.Cover("Interactive", "#6d28d9", "#db2777", media.Choices) },
		Lessons: []lesson{
			{Title: "How interactive exercises work", Summary: "What to expect.", Duration: "2 min",
				Topics: []topic{
					{Kind: kindText, Title: "Learning by doing", Duration: "2 min", Preview: true,
						Summary: "Why exercises help, and how they count towards your progress.",
						Markdown: "Reading about something and doing it are different kinds of learning. " +
							"Recalling an answer, even a wrong one followed by feedback, fixes knowledge far " +
							"better than reading it again.\n\n" +
							"The exercises in the next lesson run right in the page. Answer, check your result, " +
							"and retry as often as you like: the topic is complete when you finish an exercise, " +
							"and your score is kept with your progress.",
					},
				}},
			{Title: "Exercises", Summary: "Try them in any order.", Duration: "10 min"},
		},
	}
}
