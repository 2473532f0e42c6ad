package output

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// S3Options are the archive's S3 settings beyond the standard AWS chain
// (credentials, AWS_REGION, AWS_ENDPOINT_URL_S3, AWS_MAX_ATTEMPTS).
type S3Options struct {
	ForcePathStyle bool   // RECON_S3_FORCE_PATH_STYLE: bucket in the path, for S3-compatible servers
	SSE            string // RECON_S3_SSE: "", AES256 or aws:kms
	KMSKeyID       string // RECON_S3_SSE_KMS_KEY_ID, with aws:kms
	// PartSize is the multipart part size; files of at least twice this size
	// are uploaded in parts. Zero means 8 MiB.
	PartSize int64
	// MaxBackoff caps the delay between retries; zero keeps the SDK's 20 s.
	MaxBackoff time.Duration
}

// Validate reports settings S3 would refuse.
func (o S3Options) Validate() error {
	var errs []error
	switch o.SSE {
	case "", string(types.ServerSideEncryptionAes256), string(types.ServerSideEncryptionAwsKms):
	default:
		errs = append(errs, fmt.Errorf("RECON_S3_SSE %q is not AES256 or aws:kms", o.SSE))
	}
	if o.KMSKeyID != "" && o.SSE != string(types.ServerSideEncryptionAwsKms) {
		errs = append(errs, errors.New("RECON_S3_SSE_KMS_KEY_ID needs RECON_S3_SSE=aws:kms"))
	}
	if o.PartSize != 0 && o.PartSize < 5<<20 {
		errs = append(errs, fmt.Errorf("S3 part size %d is below the 5 MiB minimum", o.PartSize))
	}
	return errors.Join(errs...)
}

// S3Store keeps objects under a prefix of a bucket.
type S3Store struct {
	client    *s3.Client
	uploader  *transfermanager.Client
	bucket    string
	prefix    string // "" or ends in "/"
	threshold int64  // files from this size up go multipart
	opts      S3Options
}

// metaSHA256 is the user metadata key holding an object's hex sha256, so
// Has needs no download even for multipart objects.
const metaSHA256 = "sha256"

// NewS3Store returns the store for s3://bucket/prefix, configured from the
// standard AWS chain plus opts.
func NewS3Store(ctx context.Context, url string, opts S3Options) (*S3Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	bucket, prefix, _ := strings.Cut(strings.TrimPrefix(url, "s3://"), "/")
	if bucket == "" {
		return nil, fmt.Errorf("archive %s: no bucket", url)
	}
	if prefix = strings.Trim(prefix, "/"); prefix != "" {
		prefix += "/"
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("archive %s: AWS configuration: %w", url, err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1" // S3-compatible servers accept any region; AWS redirects
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = opts.ForcePathStyle
		// Fetch checks every sha256 itself; multipart objects have no whole-object checksum to log about.
		o.DisableLogOutputChecksumValidationSkipped = true
		if opts.MaxBackoff > 0 {
			if o.Retryer == nil {
				o.Retryer = retry.NewStandard()
			}
			o.Retryer = retry.AddWithMaxBackoffDelay(o.Retryer, opts.MaxBackoff)
		}
	})
	part := opts.PartSize
	if part == 0 {
		part = 8 << 20
	}
	s := &S3Store{client: client, bucket: bucket, prefix: prefix, threshold: 2 * part, opts: opts}
	s.uploader = transfermanager.New(client, func(o *transfermanager.Options) {
		o.PartSizeBytes = part
		o.MultipartUploadThreshold = s.threshold
		o.ChecksumAlgorithm = tmtypes.ChecksumAlgorithmSha256
	})
	return s, nil
}

// Put uploads key. A single-part upload carries the whole object's SHA-256,
// which S3 checks; a multipart upload carries one per part. The hex sha256
// is also kept as metadata for Has.
func (s *S3Store) Put(ctx context.Context, key string, r io.Reader, size int64, sum string) error {
	raw, err := hex.DecodeString(sum)
	if err != nil || len(raw) != 32 {
		return fmt.Errorf("put %s: bad sha256 %q", key, sum)
	}
	in := &transfermanager.UploadObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(s.prefix + key),
		Body:          r,
		ContentLength: aws.Int64(size),
		ContentType:   aws.String(contentType(key)),
		Metadata:      map[string]string{metaSHA256: sum},
	}
	if size < s.threshold {
		in.ChecksumSHA256 = aws.String(base64.StdEncoding.EncodeToString(raw))
	}
	if s.opts.SSE != "" {
		in.ServerSideEncryption = tmtypes.ServerSideEncryption(s.opts.SSE)
		if s.opts.KMSKeyID != "" {
			in.SSEKMSKeyID = aws.String(s.opts.KMSKeyID)
		}
	}
	if _, err := s.uploader.UploadObject(ctx, in); err != nil {
		return fmt.Errorf("put %s: %w", s.URL()+"/"+key, err)
	}
	return nil
}

// Has reports whether key holds an object of this size and sha256.
func (s *S3Store) Has(ctx context.Context, key string, size int64, sum string) (bool, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key)})
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("head %s: %w", s.URL()+"/"+key, err)
	}
	return aws.ToInt64(out.ContentLength) == size && out.Metadata[metaSHA256] == sum, nil
}

// Get opens key; the SDK checks the object's checksum as it is read.
func (s *S3Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key), ChecksumMode: types.ChecksumModeEnabled,
	})
	if isNotFound(err) {
		return nil, fmt.Errorf("get %s: %w", s.URL()+"/"+key, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", s.URL()+"/"+key, err)
	}
	return out.Body, nil
}

// List returns the keys under prefix, sorted.
func (s *S3Store) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.bucket), Prefix: aws.String(s.prefix + prefix),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", s.URL()+"/"+prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, strings.TrimPrefix(aws.ToString(o.Key), s.prefix))
		}
	}
	return keys, nil // S3 lists in UTF-8 binary order
}

// URL returns s3://bucket/prefix.
func (s *S3Store) URL() string {
	return "s3://" + path.Join(s.bucket, s.prefix)
}

func isNotFound(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	var api smithy.APIError
	return errors.As(err, &nsk) || errors.As(err, &nf) ||
		(errors.As(err, &api) && (api.ErrorCode() == "NotFound" || api.ErrorCode() == "NoSuchKey"))
}

// contentType names the media type of an archived file by its extension.
func contentType(key string) string {
	switch path.Ext(key) {
	case ".csv":
		return "text/csv; charset=utf-8"
	case ".json":
		return "application/json"
	case ".html":
		return "text/html; charset=utf-8"
	case ".parquet":
		return "application/vnd.apache.parquet"
	case ".sql":
		return "application/sql"
	}
	return "application/octet-stream"
}
