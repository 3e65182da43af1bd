// Package units formats quantities for people: byte sizes, counts of things, durations,
// lists cut short with a count.
package units

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
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

// List joins items as a sentence's list, "a", "a and b", "a, b and c", saying at the end
// how many more it leaves out, "a, b and 3 more". Where an item holds a comma or an "and"
// of its own (joins), it separates them with semicolons instead: "a is x, y; and 2 more".
func List(items []string, more int) string {
	if more > 0 {
		items = append(items[:len(items):len(items)], strconv.Itoa(more)+" more")
	}
	sep, last := ", ", " and "
	if slices.ContainsFunc(items, joins) {
		sep, last = "; ", "; and "
	}
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], sep) + last + items[len(items)-1]
}

// Some is List of the first most of items, and of how many more there are; of all of
// them where one more would be left: its name says more than "1 more" does.
func Some(items []string, most int) string {
	n := min(len(items), most)
	if len(items) == most+1 {
		n = len(items)
	}
	return List(items[:n], len(items)-n)
}

// joins reports whether s holds a comma or an "and" outside parentheses, as words do: a
// requirement's "a>=1,<2" joins nothing.
func joins(s string) bool {
	depth := 0
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth = max(depth-1, 0)
		case depth == 0 && (strings.HasPrefix(s[i:], ", ") || strings.HasPrefix(s[i:], " and ")):
			return true
		}
	}
	return false
}
