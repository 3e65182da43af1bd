package fetch

import (
	"fmt"

	"pkg/tarutil"
)

// A reason is one of the package's sentinels: its Error has the package's prefix, as a
// sentinel alone is said; an error that words it after what it is about says its text
// alone (said).
type reason struct{ text string }

// reasonPrefix is what a reason's Error says before its text: the package's name, as a
// sentinel's error carries it (STYLE).
const reasonPrefix = "fetch: "

func (r *reason) Error() string { return reasonPrefix + r.text }

// said words err, a reason of the package or of tarutil, without the package's prefix;
// any other error as its Error does.
func said(err error) string {
	switch e := err.(type) {
	case *reason:
		return e.text
	case *segmentError:
		return said(errPathSegment) + fmt.Sprintf(" %q", e.seg)
	}
	return tarutil.Said(err)
}
