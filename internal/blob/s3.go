package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// S3Config says where an S3 store keeps its objects and how to sign in.
// Its String form leaves the credentials out, so a config may be logged.
type S3Config struct {
	Endpoint  string // host[:port], without scheme
	Secure    bool   // https rather than http
	Region    string
	Bucket    string
	Prefix    string // "" or a key prefix ending in "/"; every key lives below it
	AccessKey string
	SecretKey string
}

func (c S3Config) String() string {
	scheme := "http"
	if c.Secure {
		scheme = "https"
	}
	return fmt.Sprintf("s3://%s/%s?endpoint=%s://%s&region=%s", c.Bucket, c.Prefix, scheme, c.Endpoint, c.Region)
}

// GoString keeps %#v from printing the credentials too.
func (c S3Config) GoString() string { return c.String() }

// Defaults for a location that names only a bucket: AWS itself.
const (
	defaultS3Endpoint = "https://s3.amazonaws.com"
	defaultS3Region   = "us-east-1"
)

// s3PartSize is the multipart part size, and so the memory buffered per
// upload of unknown size (minio-go would otherwise buffer ~576 MiB). With at
// most 10,000 parts it allows objects of up to about 80 GiB.
const s3PartSize = 8 << 20

// ParseS3URL reads a location of the form
//
//	s3://BUCKET/optional/prefix?endpoint=http://HOST:PORT&region=R
//
// The endpoint defaults to AWS and the region to us-east-1. Credentials come
// from the caller (normally AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), never
// from the URL, and errors never repeat the URL.
func ParseS3URL(raw, accessKey, secretKey string) (S3Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the whole URL; keep only the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return S3Config{}, fmt.Errorf("blob: s3 location: %v", err)
	}
	if u.Scheme != "s3" {
		return S3Config{}, errors.New("blob: s3 location: scheme must be s3://")
	}
	if u.User != nil {
		return S3Config{}, errors.New("blob: s3 location: credentials do not belong in the URL; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if err := s3utils.CheckValidBucketNameStrict(u.Host); err != nil {
		return S3Config{}, fmt.Errorf("blob: s3 location: bucket %q: %v", u.Host, err)
	}
	if u.Fragment != "" {
		return S3Config{}, errors.New("blob: s3 location: unexpected #fragment")
	}
	prefix, err := dirPrefix(strings.TrimPrefix(u.Path, "/"))
	if err != nil {
		return S3Config{}, fmt.Errorf("blob: s3 location: prefix: %w", err)
	}
	cfg := S3Config{Bucket: u.Host, Prefix: prefix, Region: defaultS3Region, AccessKey: accessKey, SecretKey: secretKey}

	endpoint := defaultS3Endpoint
	for name, values := range u.Query() {
		if len(values) != 1 {
			return S3Config{}, fmt.Errorf("blob: s3 location: parameter %q given %d times", name, len(values))
		}
		switch name {
		case "endpoint":
			endpoint = values[0]
		case "region":
			cfg.Region = values[0]
		default:
			return S3Config{}, fmt.Errorf("blob: s3 location: unknown parameter %q", name)
		}
	}
	if cfg.Endpoint, cfg.Secure, err = parseEndpoint(endpoint); err != nil {
		return S3Config{}, err
	}
	if cfg.Region == "" {
		return S3Config{}, errors.New("blob: s3 location: empty region")
	}
	if accessKey == "" || secretKey == "" {
		return S3Config{}, errors.New("blob: s3: credentials missing; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	return cfg, nil
}

// parseEndpoint splits "http(s)://host[:port]" into what minio-go wants.
func parseEndpoint(raw string) (hostPort string, secure bool, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false, errors.New("blob: s3 location: endpoint must be http://HOST[:PORT] or https://HOST[:PORT]")
	}
	switch u.Scheme {
	case "http":
		return u.Host, false, nil
	case "https":
		return u.Host, true, nil
	}
	return "", false, errors.New("blob: s3 location: endpoint scheme must be http or https")
}

// dirPrefix checks a prefix that names a "directory" and gives it its
// trailing slash: "" stays "", "a/b" and "a/b/" become "a/b/".
func dirPrefix(p string) (string, error) {
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return "", nil
	}
	if err := ValidateKey(p); err != nil {
		return "", err
	}
	return p + "/", nil
}

// minRedactLen is the shortest credential scrubbed from error texts.
const minRedactLen = 8

// S3 is a Store in an S3-compatible bucket, below an optional key prefix.
type S3 struct {
	core   minio.Core // Core gives a GET that returns data and headers together
	bucket string
	prefix string
	// secrets are scrubbed from error texts before they leave the store.
	secrets []string
}

// NewS3 connects to the bucket, creating it when missing.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	if cfg.Endpoint == "" || cfg.Bucket == "" {
		return nil, errors.New("blob: s3: endpoint and bucket are required")
	}
	prefix, err := dirPrefix(cfg.Prefix)
	if err != nil {
		return nil, fmt.Errorf("blob: s3: prefix: %w", err)
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure: cfg.Secure,
		Region: cfg.Region,
		// Path style works on every S3-compatible server and with bucket
		// names that are not valid host names.
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return nil, fmt.Errorf("blob: s3: %v", err)
	}
	s := &S3{core: minio.Core{Client: client}, bucket: cfg.Bucket, prefix: prefix}
	// Real keys are 16 characters or more; replacing a very short "secret"
	// (as in a test) would garble every message it happens to occur in.
	for _, secret := range []string{cfg.AccessKey, cfg.SecretKey} {
		if len(secret) >= minRedactLen {
			s.secrets = append(s.secrets, secret)
		}
	}
	if err := s.ensureBucket(ctx, cfg.Region); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *S3) ensureBucket(ctx context.Context, region string) error {
	ok, err := s.core.BucketExists(ctx, s.bucket)
	if err != nil {
		return s.fail("bucket", s.bucket, err)
	}
	if ok {
		return nil
	}
	err = s.core.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{Region: region})
	// Another process may have created it since BucketExists.
	if err != nil && minio.ToErrorResponse(err).Code != "BucketAlreadyOwnedByYou" {
		return s.fail("create bucket", s.bucket, err)
	}
	return nil
}

// Put uploads the object; S3 makes it visible only once complete.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	ct, err := normalizeContentType(contentType)
	if err != nil {
		return err
	}
	_, err = s.core.Client.PutObject(ctx, s.bucket, s.prefix+key, r, size,
		minio.PutObjectOptions{ContentType: ct, PartSize: s3PartSize})
	if err != nil {
		return s.fail("put", key, err)
	}
	return nil
}

// Get opens the object with a single GET, so the Info and the data come
// from the same version even while the key is being overwritten.
func (s *S3) Get(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	if err := ValidateKey(key); err != nil {
		return nil, Info{}, err
	}
	body, oi, _, err := s.core.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		return nil, Info{}, s.objectFail("get", key, err)
	}
	return body, s.info(key, oi), nil
}

// Stat describes the object.
func (s *S3) Stat(ctx context.Context, key string) (Info, error) {
	if err := ValidateKey(key); err != nil {
		return Info{}, err
	}
	oi, err := s.core.StatObject(ctx, s.bucket, s.prefix+key, minio.StatObjectOptions{})
	if err != nil {
		return Info{}, s.objectFail("stat", key, err)
	}
	return s.info(key, oi), nil
}

func (s *S3) info(key string, oi minio.ObjectInfo) Info {
	return Info{Key: key, Size: oi.Size, ContentType: oi.ContentType, ModTime: oi.LastModified}
}

// Delete removes the object; S3 already treats an absent key as success.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := s.core.RemoveObject(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{}); err != nil {
		return s.fail("delete", key, err)
	}
	return nil
}

// List pages through the bucket listing, which S3 returns in key order.
// Info.ContentType is left empty: listings do not carry it, and a HEAD per
// object would make List as slow as N Stats.
func (s *S3) List(ctx context.Context, prefix string, fn func(Info) error) error {
	if err := validatePrefix(prefix); err != nil {
		return err
	}
	// Cancelling tells minio-go to stop paging when fn ends the walk early.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := minio.ListObjectsOptions{Prefix: s.prefix + prefix, Recursive: true}
	for o := range s.core.ListObjectsIter(ctx, s.bucket, opts) {
		if o.Err != nil {
			return s.fail("list", prefix, o.Err)
		}
		// Some servers list directory markers ("a/"); no valid key ends in "/".
		if strings.HasSuffix(o.Key, "/") {
			continue
		}
		info := Info{Key: strings.TrimPrefix(o.Key, s.prefix), Size: o.Size, ModTime: o.LastModified}
		if err := fn(info); err != nil {
			return err
		}
	}
	return nil
}

// DeletePrefix streams the listing into multi-object deletes.
func (s *S3) DeletePrefix(ctx context.Context, prefix string) error {
	if err := validatePrefix(prefix); err != nil {
		return err
	}
	// Cancelling on return stops the lister if the deletes end first.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	objects := make(chan minio.ObjectInfo)
	listErr := make(chan error, 1)
	go func() {
		defer close(objects)
		opts := minio.ListObjectsOptions{Prefix: s.prefix + prefix, Recursive: true}
		for o := range s.core.ListObjectsIter(ctx, s.bucket, opts) {
			if o.Err != nil {
				listErr <- o.Err
				return
			}
			select {
			case objects <- o:
			case <-ctx.Done():
				listErr <- ctx.Err()
				return
			}
		}
		listErr <- nil
	}()
	var firstErr error
	for e := range s.core.RemoveObjects(ctx, s.bucket, objects, minio.RemoveObjectsOptions{}) {
		if firstErr == nil {
			firstErr = s.fail("delete prefix", prefix, e.Err)
		}
	}
	if firstErr != nil {
		return firstErr
	}
	if err := <-listErr; err != nil {
		return s.fail("delete prefix", prefix, err)
	}
	return nil
}

// Ping checks that the bucket answers and exists.
func (s *S3) Ping(ctx context.Context) error {
	ok, err := s.core.BucketExists(ctx, s.bucket)
	if err != nil {
		return s.fail("ping", s.bucket, err)
	}
	if !ok {
		return fmt.Errorf("blob: s3 ping: bucket %q does not exist", s.bucket)
	}
	return nil
}

// objectFail is fail for reads of one object, where a 404 means the key
// holds nothing. (A HEAD answer has no body, so minio-go reports every 404
// as NoSuchKey; a GET says NoSuchBucket when that is the cause.)
func (s *S3) objectFail(op, key string, err error) error {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && resp.StatusCode == http.StatusNotFound && resp.Code != "NoSuchBucket" {
		return fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	return s.fail(op, key, err)
}

// fail wraps an error from minio-go, keeping its chain but removing any
// credential from its text.
func (s *S3) fail(op, key string, err error) error {
	for _, secret := range s.secrets {
		if strings.Contains(err.Error(), secret) {
			return fmt.Errorf("blob: s3 %s %q: %w", op, key, redactedError{err: err, secrets: s.secrets})
		}
	}
	return fmt.Errorf("blob: s3 %s %q: %w", op, key, err)
}

// redactedError hides credentials that a server or library echoed in an
// error message, while errors.Is and errors.As still see the cause.
type redactedError struct {
	err     error
	secrets []string
}

func (r redactedError) Error() string {
	text := r.err.Error()
	for _, secret := range r.secrets {
		text = strings.ReplaceAll(text, secret, "[redacted]")
	}
	return text
}

func (r redactedError) Unwrap() error { return r.err }
