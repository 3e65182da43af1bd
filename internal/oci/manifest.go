package oci

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"regexp"
	"sync"
)

// The media types of pkg's artifact (docs/formats.md): an OCI image manifest whose
// artifactType says it holds a pkg repository, its config the empty descriptor, its
// layers the index, its signature and the archives, each titled with its file name.
const (
	MediaTypeManifest   = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeImageIndex = "application/vnd.oci.image.index.v1+json"
	MediaTypeEmpty      = "application/vnd.oci.empty.v1+json"
	ArtifactType        = "application/vnd.pkg.repository.v1"
	MediaTypeIndex      = "application/vnd.pkg.index.v1+json"
	MediaTypeSignature  = "application/vnd.pkg.index.sig.v1"
	MediaTypeArchive    = "application/vnd.pkg.archive.v1"
	AnnotationTitle     = "org.opencontainers.image.title"
)

// Docker's manifest types, accepted only to be refused by name: distribution 2.8
// answers a request that does not accept a Docker image's manifest with 400, or with the
// image converted to the long-deprecated schema 1.
const (
	mediaTypeDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
	mediaTypeDockerList     = "application/vnd.docker.distribution.manifest.list.v2+json"
)

// Accept is what a manifest GET accepts: distribution 2.8 answers 404 to a request for an
// OCI manifest that does not accept its type.
const Accept = MediaTypeManifest + ", " + MediaTypeImageIndex + ", " + mediaTypeDockerManifest + ", " + mediaTypeDockerList

// MaxManifestSize bounds a manifest: distribution takes none larger.
const MaxManifestSize = 4 << 20 // 4 MiB

// Empty is the empty JSON object's descriptor, the config of an artifact without one.
var Empty = Descriptor{MediaType: MediaTypeEmpty, Digest: Digest([]byte("{}")), Size: 2, Data: []byte("{}")}

// Descriptor names a blob (image-spec descriptor.md).
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Data        []byte            `json:"data,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Manifest is an OCI image manifest (image-spec manifest.md), as pkg's artifact is one.
type Manifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	ArtifactType  string            `json:"artifactType,omitempty"`
	Config        Descriptor        `json:"config"`
	Layers        []Descriptor      `json:"layers"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// digestRE is compiled on first use, not at every pkg command's start.
var digestRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{64}$`) })

// Digest returns the sha256 digest of b, as a registry names blobs.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ErrManifest is wrapped in the error for a manifest that is not pkg's artifact.
var ErrManifest = errors.New("oci: not a pkg repository manifest")

// ParseManifest reads the manifest b, served with Content-Type contentType: an image
// manifest (an image index is refused) of pkg's artifact type whose descriptors name
// sha256 digests.
func ParseManifest(b []byte, contentType string) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrManifest, err)
	}
	ct, _, _ := mime.ParseMediaType(contentType)
	switch {
	case m.MediaType == MediaTypeImageIndex || ct == MediaTypeImageIndex:
		return nil, fmt.Errorf("%w: an image index, not an image manifest", ErrManifest)
	case m.SchemaVersion != 2 || m.MediaType != MediaTypeManifest:
		return nil, fmt.Errorf("%w: schemaVersion %d, mediaType %.80q", ErrManifest, m.SchemaVersion, m.MediaType)
	case ct != "" && ct != m.MediaType:
		return nil, fmt.Errorf("%w: served as %.80q, its mediaType is %q", ErrManifest, ct, m.MediaType)
	case m.ArtifactType != ArtifactType:
		return nil, fmt.Errorf("%w: artifactType %.80q, want %s", ErrManifest, m.ArtifactType, ArtifactType)
	}
	for _, d := range append([]Descriptor{m.Config}, m.Layers...) {
		if !digestRE().MatchString(d.Digest) || d.Size < 0 {
			return nil, fmt.Errorf("%w: descriptor of digest %.80q, size %d", ErrManifest, d.Digest, d.Size)
		}
	}
	return &m, nil
}

// Layer returns the layer titled title, as push names the index, its signature and each
// archive by its file name.
func (m *Manifest) Layer(title string) (Descriptor, bool) {
	for _, d := range m.Layers {
		if d.Annotations[AnnotationTitle] == title {
			return d, true
		}
	}
	return Descriptor{}, false
}

// ValidDigest reports whether d is a sha256 digest as pkg names blobs.
func ValidDigest(d string) bool { return digestRE().MatchString(d) }

// NewLayer returns the descriptor of a layer: the blob of digest d and size bytes, of
// media type mediaType, titled with the file name title.
func NewLayer(title, mediaType, d string, size int64) Descriptor {
	return Descriptor{MediaType: mediaType, Digest: d, Size: size, Annotations: map[string]string{AnnotationTitle: title}}
}

// NewManifest returns pkg's artifact manifest of layers.
func NewManifest(layers []Descriptor, annotations map[string]string) Manifest {
	return Manifest{SchemaVersion: 2, MediaType: MediaTypeManifest, ArtifactType: ArtifactType, Config: Empty, Layers: layers, Annotations: annotations}
}
