// Package lti is LTI 1.3 (1EdTech core and security framework) in both
// roles: as a tool that other platforms (Moodle, Canvas, Blackboard)
// launch, and as a platform that launches external tools from lti
// topics. Messages are id_tokens signed with RS256 only; our signing key
// is the tenant's own key pair, published as the tenant's JWKS.
package lti

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// Claim names of the LTI 1.3 core specification.
const (
	ClaimMessageType   = "https://purl.imsglobal.org/spec/lti/claim/message_type"
	ClaimVersion       = "https://purl.imsglobal.org/spec/lti/claim/version"
	ClaimDeploymentID  = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"
	ClaimTargetLink    = "https://purl.imsglobal.org/spec/lti/claim/target_link_uri"
	ClaimResourceLink  = "https://purl.imsglobal.org/spec/lti/claim/resource_link"
	ClaimRoles         = "https://purl.imsglobal.org/spec/lti/claim/roles"
	ClaimContext       = "https://purl.imsglobal.org/spec/lti/claim/context"
	ClaimCustom        = "https://purl.imsglobal.org/spec/lti/claim/custom"
	ClaimPresentation  = "https://purl.imsglobal.org/spec/lti/claim/launch_presentation"
	ClaimToolPlatform  = "https://purl.imsglobal.org/spec/lti/claim/tool_platform"
	ClaimAGSEndpoint   = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
	MessageResourceReq = "LtiResourceLinkRequest"
	Version            = "1.3.0"
)

// Role URIs of the LIS vocabulary that matter to us.
const (
	RoleInstructor    = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
	RoleLearner       = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
	roleInstructorSub = "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#"
)

// MapRoles turns the roles of a launch into our one role: Instructor, in
// full or short form, or any of its sub-roles, makes a tutor; everything
// else, administrators of the other platform included, a student. No
// launch ever makes an admin.
func MapRoles(roles []string) string {
	for _, r := range roles {
		if r == RoleInstructor || r == "Instructor" || strings.HasPrefix(r, roleInstructorSub) {
			return "tutor"
		}
	}
	return "student"
}

// secret is a fresh random value for states, nonces, hints and codes.
func secret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hash is how a secret is kept: a leaked table gives no usable value.
func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
