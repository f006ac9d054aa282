package lrs

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"mime"
	"reflect"
	"sort"
	"strings"
	"time"

	// The hashes of RS256, RS384 and RS512.
	_ "crypto/sha256"
	_ "crypto/sha512"
)

// UsageSignature is the usageType of the attachment that signs a
// statement (Data 2.6).
const UsageSignature = "http://adlnet.gov/expapi/attachments/signature"

var signatureHashes = map[string]crypto.Hash{"RS256": crypto.SHA256, "RS384": crypto.SHA384, "RS512": crypto.SHA512}

// checkSignature checks a signed statement (Data 2.6): its signature
// attachment is application/octet-stream and sent with the request, and
// holds a JWS in compact serialization whose algorithm is RS256, RS384 or
// RS512, whose payload is the statement as sent (the differences the
// statement comparison rules allow aside) and, when its header carries an
// X.509 certificate (x5c), whose signature that certificate's key
// verifies. Anything else is a 400.
func checkSignature(st *Statement, attachments map[string]Attachment) error {
	for _, a := range st.Attachments {
		if a.UsageType != UsageSignature {
			continue
		}
		if mt, _, err := mime.ParseMediaType(a.ContentType); err != nil || mt != "application/octet-stream" {
			return bad("A signature attachment must have the contentType application/octet-stream.")
		}
		at, ok := attachments[a.SHA2]
		if !ok {
			return bad("The statement's signature must be sent with it as an attachment part.")
		}
		return verifyJWS(st, at.Body)
	}
	return nil
}

func b64url(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

func verifyJWS(st *Statement, jws []byte) error {
	parts := strings.Split(string(bytes.TrimSpace(jws)), ".")
	if len(parts) != 3 {
		return bad("The signature must be a JWS in compact serialization.")
	}
	rawHeader, err1 := b64url(parts[0])
	payload, err2 := b64url(parts[1])
	sig, err3 := b64url(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || len(sig) == 0 {
		return bad("The signature is not a well-formed JWS.")
	}
	var header struct {
		Alg string   `json:"alg"`
		X5C []string `json:"x5c"`
	}
	if err := json.Unmarshal(rawHeader, &header); err != nil {
		return bad("The signature's JWS header is not a JSON object.")
	}
	hash, ok := signatureHashes[header.Alg]
	if !ok {
		return bad("The signature's algorithm must be RS256, RS384 or RS512, not %q.", header.Alg)
	}
	signed, err := ParseStatement(payload)
	if err != nil {
		return bad("The signature's payload must be the statement as JSON.")
	}
	if !equivalentStatements(signed.Object, st.Object) {
		return bad("The signature's payload is not the statement it signs.")
	}
	if len(header.X5C) == 0 {
		return nil
	}
	der, err := base64.StdEncoding.DecodeString(header.X5C[0])
	if err != nil {
		return bad("The signature's x5c certificate is not base64.")
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return bad("The signature's x5c certificate cannot be read.")
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return bad("The signature's x5c certificate has no RSA key.")
	}
	h := hash.New()
	h.Write([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, hash, h.Sum(nil), sig); err != nil {
		return bad("The signature does not verify against its x5c certificate.")
	}
	return nil
}

// equivalentStatements compares a signed statement with the one received
// by the rules of Data 2.3 (statement comparison): the properties the LRS
// may set (id, authority, stored, timestamp, version) count only when
// both have them, timestamps as instants; attachments, activity
// definitions and verb displays are not part of a statement; group
// members are not ordered.
func equivalentStatements(a, b map[string]any) bool {
	a, b = comparable(a), comparable(b)
	for _, k := range []string{"id", "authority", "stored", "timestamp", "version"} {
		va, okA := a[k]
		vb, okB := b[k]
		if okA && okB && (k == "timestamp" || k == "stored") {
			ta, errA := time.Parse(time.RFC3339Nano, asString(va))
			tb, errB := time.Parse(time.RFC3339Nano, asString(vb))
			if errA == nil && errB == nil && ta.Equal(tb) {
				okA = false
			}
		}
		if !okA || !okB {
			delete(a, k)
			delete(b, k)
		}
	}
	return reflect.DeepEqual(a, b)
}

func asString(v any) string { s, _ := v.(string); return s }

// comparable is a deep copy of a statement without what comparison
// ignores, group members sorted.
func comparable(st map[string]any) map[string]any {
	raw, _ := json.Marshal(st)
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	d.Decode(&m)
	strip(m)
	return m
}

func strip(st map[string]any) {
	delete(st, "attachments")
	if v, ok := st["verb"].(map[string]any); ok {
		delete(v, "display")
	}
	for _, k := range []string{"actor", "authority"} {
		sortMembers(st[k])
	}
	if o, ok := st["object"].(map[string]any); ok {
		switch o["objectType"] {
		case nil, "Activity":
			delete(o, "definition")
		case "SubStatement":
			strip(o)
		default:
			sortMembers(o)
		}
	}
	if c, ok := st["context"].(map[string]any); ok {
		sortMembers(c["instructor"])
		sortMembers(c["team"])
		eachContextActivity(c, func(_ []any, _ int, a map[string]any) { delete(a, "definition") })
	}
}

func sortMembers(v any) {
	g, ok := v.(map[string]any)
	if !ok {
		return
	}
	list, ok := g["member"].([]any)
	if !ok {
		return
	}
	key := func(x any) string { b, _ := json.Marshal(x); return string(b) }
	sort.Slice(list, func(i, j int) bool { return key(list[i]) < key(list[j]) })
}
