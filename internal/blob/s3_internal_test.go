package blob

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

func TestS3ErrorsHideCredentials(t *testing.T) {
	const ak, sk = "AKIDEXAMPLE12345", "wJalrXUtnFEMI-K7MDENG"
	s := &S3{secrets: []string{ak, sk}}
	cause := errors.New("server says: unknown key " + ak + " for " + sk)
	err := s.fail("put", "k", cause)
	if strings.Contains(err.Error(), ak) || strings.Contains(err.Error(), sk) {
		t.Errorf("error shows a credential: %v", err)
	}
	if !errors.Is(err, cause) {
		t.Error("redacting lost the error chain")
	}
}

func TestS3NotFoundMapping(t *testing.T) {
	s := &S3{}
	cases := []struct {
		resp minio.ErrorResponse
		want bool
	}{
		{minio.ErrorResponse{StatusCode: http.StatusNotFound, Code: "NoSuchKey"}, true},
		{minio.ErrorResponse{StatusCode: http.StatusNotFound, Code: "NoSuchBucket"}, false},
		{minio.ErrorResponse{StatusCode: http.StatusForbidden, Code: "AccessDenied"}, false},
	}
	for _, c := range cases {
		if got := errors.Is(s.objectFail("get", "k", c.resp), ErrNotFound); got != c.want {
			t.Errorf("%s: ErrNotFound = %v, want %v", c.resp.Code, got, c.want)
		}
	}
}

func TestValidatePrefix(t *testing.T) {
	for _, p := range []string{"", "a", "a/", "a/b", "a/b/", "a/..", "a/.", "a/.x", ".."} {
		if err := validatePrefix(p); err != nil {
			t.Errorf("validatePrefix(%q) = %v, want nil", p, err)
		}
	}
	for _, p := range []string{"/", "/a", "a//", "../", "a/../b", "./", `a\`, "a\x00", "\xff"} {
		if err := validatePrefix(p); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("validatePrefix(%q) = %v, want ErrInvalidKey", p, err)
		}
	}
}
