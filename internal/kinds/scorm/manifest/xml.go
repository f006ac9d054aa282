package manifest

import "encoding/xml"

// The XML shapes below match elements by local name only: SCORM 1.2 and
// the 2004 editions put the same elements in different namespaces (and
// authoring tools vary the prefixes), so the namespace decides the version
// (see detect), never whether an element is read. Attributes that changed
// case between versions (scormtype, scormType) have a field each.

type xManifest struct {
	XMLName       xml.Name       `xml:"manifest"`
	Identifier    string         `xml:"identifier,attr"`
	Base          string         `xml:"http://www.w3.org/XML/1998/namespace base,attr"`
	Metadata      xMetadata      `xml:"metadata"`
	Organizations xOrganizations `xml:"organizations"`
	Resources     xResources     `xml:"resources"`
	Collection    []Sequencing   `xml:"sequencingCollection>sequencing"`
	Namespaces    []xml.Attr     `xml:",any,attr"`
	Submanifests  []xSubmanifest `xml:"manifest"`
}

type xSubmanifest struct {
	Identifier string `xml:"identifier,attr"`
}

type xMetadata struct {
	Schema        string `xml:"schema"`
	SchemaVersion string `xml:"schemaversion"`
}

type xOrganizations struct {
	Default string          `xml:"default,attr"`
	List    []xOrganization `xml:"organization"`
}

type xOrganization struct {
	Identifier            string      `xml:"identifier,attr"`
	Structure             string      `xml:"structure,attr"`
	ObjectivesGlobalToSys *bool       `xml:"objectivesGlobalToSystem,attr"`
	SharedDataGlobalToSys *bool       `xml:"sharedDataGlobalToSystem,attr"`
	Title                 *string     `xml:"title"`
	Items                 []xItem     `xml:"item"`
	Sequencing            *Sequencing `xml:"sequencing"`
	CompletionThreshold   *xThreshold `xml:"completionThreshold"`
}

type xItem struct {
	Identifier          string         `xml:"identifier,attr"`
	IdentifierRef       string         `xml:"identifierref,attr"`
	IsVisible           *bool          `xml:"isvisible,attr"`
	Parameters          string         `xml:"parameters,attr"`
	Title               string         `xml:"title"`
	Items               []xItem        `xml:"item"`
	Prerequisites       []xText        `xml:"prerequisites"`
	MaxTimeAllowed      string         `xml:"maxtimeallowed"`
	TimeLimitAction     []string       `xml:"timelimitaction"`
	TimeLimitAction2004 []string       `xml:"timeLimitAction"`
	DataFromLMS         []string       `xml:"datafromlms"`
	DataFromLMS2004     []string       `xml:"dataFromLMS"`
	MasteryScore        string         `xml:"masteryscore"`
	CompletionThreshold *xThreshold    `xml:"completionThreshold"`
	Sequencing          *Sequencing    `xml:"sequencing"`
	Presentation        *xPresentation `xml:"presentation"`
	Data                []xMap         `xml:"data>map"`
}

type xText struct {
	Type  string `xml:"type,attr"`
	Value string `xml:",chardata"`
}

type xThreshold struct {
	CompletedByMeasure *bool  `xml:"completedByMeasure,attr"`
	MinProgressMeasure string `xml:"minProgressMeasure,attr"`
	ProgressWeight     string `xml:"progressWeight,attr"`
	Value              string `xml:",chardata"`
}

type xPresentation struct {
	Hide []string `xml:"navigationInterface>hideLMSUI"`
}

type xMap struct {
	TargetID        string `xml:"targetID,attr"`
	ReadSharedData  *bool  `xml:"readSharedData,attr"`
	WriteSharedData *bool  `xml:"writeSharedData,attr"`
}

type xResources struct {
	Base string      `xml:"http://www.w3.org/XML/1998/namespace base,attr"`
	List []xResource `xml:"resource"`
}

type xResource struct {
	Identifier   string        `xml:"identifier,attr"`
	Type         string        `xml:"type,attr"`
	Href         *string       `xml:"href,attr"`
	Base         string        `xml:"http://www.w3.org/XML/1998/namespace base,attr"`
	ScormType12  string        `xml:"scormtype,attr"`
	ScormType    string        `xml:"scormType,attr"`
	Files        []xFile       `xml:"file"`
	Dependencies []xDependency `xml:"dependency"`
}

type xFile struct {
	Href string `xml:"href,attr"`
}

type xDependency struct {
	IdentifierRef string `xml:"identifierref,attr"`
}
