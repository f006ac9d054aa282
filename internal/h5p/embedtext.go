package h5p

import "path"

// coreStrings are the English texts of the H5P core player (its
// H5PIntegration.l10n.H5P). Content types bring their own texts; these are
// only the player's frame, dialogs and licence names.
var coreStrings = map[string]string{
	"fullscreen":                    "Full screen",
	"disableFullscreen":             "Leave full screen",
	"download":                      "Download",
	"copyrights":                    "Rights of use",
	"embed":                         "Embed",
	"size":                          "Size",
	"width":                         "Width",
	"height":                        "Height",
	"showAdvanced":                  "Show advanced",
	"hideAdvanced":                  "Hide advanced",
	"advancedHelp":                  "Paste this script where the content is embedded to make its frame resize itself.",
	"copyrightInformation":          "Rights of use",
	"close":                         "Close",
	"title":                         "Title",
	"author":                        "Author",
	"year":                          "Year",
	"source":                        "Source",
	"license":                       "Licence",
	"thumbnail":                     "Thumbnail",
	"noCopyrights":                  "No rights information is available for this content.",
	"reuse":                         "Reuse",
	"reuseContent":                  "Reuse content",
	"reuseDescription":              "Reuse this content.",
	"downloadDescription":           "Download this content as an H5P file.",
	"copyrightsDescription":         "See the rights information of this content.",
	"embedDescription":              "See the code to embed this content on another site.",
	"h5pDescription":                "Learn about H5P, the technology behind this content.",
	"contentChanged":                "This content has changed since you last used it.",
	"startingOver":                  "You will start from the beginning.",
	"by":                            "by",
	"showMore":                      "Show more",
	"showLess":                      "Show less",
	"subLevel":                      "Sublevel",
	"confirmDialogHeader":           "Please confirm",
	"confirmDialogBody":             "Do you want to go on? This cannot be undone.",
	"cancelLabel":                   "Cancel",
	"confirmLabel":                  "Confirm",
	"licenseU":                      "Undisclosed",
	"licenseCCBY":                   "Attribution",
	"licenseCCBYSA":                 "Attribution-ShareAlike",
	"licenseCCBYND":                 "Attribution-NoDerivs",
	"licenseCCBYNC":                 "Attribution-NonCommercial",
	"licenseCCBYNCSA":               "Attribution-NonCommercial-ShareAlike",
	"licenseCCBYNCND":               "Attribution-NonCommercial-NoDerivs",
	"licenseCC40":                   "4.0 International",
	"licenseCC30":                   "3.0 Unported",
	"licenseCC25":                   "2.5 Generic",
	"licenseCC20":                   "2.0 Generic",
	"licenseCC10":                   "1.0 Generic",
	"licenseGPL":                    "General Public License",
	"licenseV3":                     "Version 3",
	"licenseV2":                     "Version 2",
	"licenseV1":                     "Version 1",
	"licensePD":                     "Public domain",
	"licenseCC010":                  "CC0 1.0 Universal (public domain dedication)",
	"licensePDM":                    "Public Domain Mark",
	"licenseC":                      "Copyright",
	"contentType":                   "Content type",
	"licenseExtras":                 "Licence extras",
	"changes":                       "Changes",
	"contentCopied":                 "Content copied to the clipboard.",
	"connectionLost":                "The connection was lost. Your results will be sent when it is back.",
	"connectionReestablished":       "The connection is back.",
	"resubmitScores":                "Trying to send your results again…",
	"offlineDialogHeader":           "You are offline",
	"offlineDialogBody":             "Your results could not be sent.",
	"offlineDialogRetryMessage":     "Trying again in :num…",
	"offlineDialogRetryButtonLabel": "Try again now",
	"offlineSuccessfulSubmit":       "Your results were sent.",
	"missingTranslation":            "[Missing text: :key]",
	"a11yTitleShowLabel":            "Show label",
	"a11yTitleHideLabel":            "Hide label",
}

// editorMainScript marks a directory as an H5P editor client.
const editorMainScript = "scripts/h5peditor-editor.js"

// editorScriptOrder is the load order of the H5P editor client's scripts
// (the layout of the H5P editor library); files a version lacks are
// skipped.
var editorScriptOrder = []string{
	"scripts/h5peditor.js",
	"scripts/h5p-hub-client.js",
	"scripts/h5peditor-semantic-structure.js",
	"scripts/h5peditor-editor.js",
	"scripts/h5peditor-library-selector.js",
	"scripts/h5peditor-fullscreen-bar.js",
	"scripts/h5peditor-form.js",
	"scripts/h5peditor-text.js",
	"scripts/h5peditor-html.js",
	"scripts/h5peditor-number.js",
	"scripts/h5peditor-textarea.js",
	"scripts/h5peditor-file-uploader.js",
	"scripts/h5peditor-file.js",
	"scripts/h5peditor-image.js",
	"scripts/h5peditor-image-popup.js",
	"scripts/h5peditor-av.js",
	"scripts/h5peditor-group.js",
	"scripts/h5peditor-boolean.js",
	"scripts/h5peditor-list.js",
	"scripts/h5peditor-list-editor.js",
	"scripts/h5peditor-library.js",
	"scripts/h5peditor-library-list-cache.js",
	"scripts/h5peditor-select.js",
	"scripts/h5peditor-selector-hub.js",
	"scripts/h5peditor-selector-legacy.js",
	"scripts/h5peditor-dimensions.js",
	"scripts/h5peditor-coordinates.js",
	"scripts/h5peditor-none.js",
	"scripts/h5peditor-metadata.js",
	"scripts/h5peditor-metadata-author-widget.js",
	"scripts/h5peditor-metadata-changelog-widget.js",
	"scripts/h5peditor-pre-save.js",
	"ckeditor/ckeditor.js",
	"language/en.js",
}

var editorStyleOrder = []string{
	"libs/darkroom.css",
	"styles/css/h5p-hub-client.css",
	"styles/css/fonts.css",
	"styles/css/application.css",
	"styles/css/libs/zebra_datepicker.min.css",
}

// editorAssets lists the editor client's scripts and styles present in
// dir, as URLs under /h5p/editor/.
func editorAssets(dir string) (scripts, styles []string) {
	for _, f := range editorScriptOrder {
		if installed(dir, f) {
			scripts = append(scripts, path.Join("/h5p/editor", f))
		}
	}
	for _, f := range editorStyleOrder {
		if installed(dir, f) {
			styles = append(styles, path.Join("/h5p/editor", f))
		}
	}
	return scripts, styles
}
