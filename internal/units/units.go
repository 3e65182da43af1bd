// Package units formats quantities for people: byte sizes, counts of things, durations.
package units

import (
	"fmt"
	"strconv"
	"time"
)

// Size formats a byte count: "512 B", "1.5 KiB", "3.0 GiB".
func Size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Count formats n things: "1 file", "2 files".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Duration formats a duration to about three significant digits.
func Duration(d time.Duration) string {
	for _, u := range []time.Duration{time.Second, time.Millisecond, time.Microsecond} {
		if d >= u {
			return d.Round(u / 100).String()
		}
	}
	return d.String()
}

// Roughly says d in its largest unit: "a minute", "5 minutes", "3 hours", "2 days".
func Roughly(d time.Duration) string {
	switch {
	case d < 2*time.Minute:
		return "a minute"
	case d < 2*time.Hour:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	case d < 48*time.Hour:
		return fmt.Sprintf("%d hours", d/time.Hour)
	}
	return fmt.Sprintf("%d days", d/(24*time.Hour))
}
