package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"pkg/internal/termtext"
	"pkg/internal/units"
	"pkg/txn"
)

// The documents as people read them: each WriteText prints its document as the commands
// do without --json. A tip is the command's own advice, appended where it applies.

// WriteText prints one line per package: name, version, files, size, the local archive
// file it came from, if it did, and whether its record is incomplete.
func (l List) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, p := range l.Packages {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s", p.Name, p.Version, units.Count(p.Files, "file"), units.Size(p.Size))
		if p.Origin != "" {
			fmt.Fprintf(tw, "\tfrom %s", termtext.Printable(p.Origin))
		}
		if p.Incomplete {
			fmt.Fprint(tw, "\tincomplete: recorded by a repair without its dependencies, commands and libraries")
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// WriteText prints a field a line, leaving out empty ones; tip follows "installed: no".
func (p Info) WriteText(w io.Writer, tip string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	fmt.Fprintf(tw, "name:\t%s\nversion:\t%s\n", p.Name, p.Version)
	if p.Incomplete {
		fmt.Fprintf(tw, "record:\tincomplete: a repair recorded it without its dependencies, commands and libraries (unknown, not none)\n")
	}
	fields := [][2]string{{"summary", p.Summary}, {"depends", strings.Join(p.Depends, ", ")},
		{"provides", strings.Join(p.Provides, ", ")}, {"conflicts", strings.Join(p.Conflicts, ", ")},
		{"replaces", strings.Join(p.Replaces, ", ")}, {"into", p.Into}, {"env", strings.Join(p.Env, ", ")},
		{"bin", strings.Join(p.Bin, ", ")}, {"lib", strings.Join(p.Lib, ", ")}}
	if p.Files > 0 || p.Installed {
		fields = append(fields, [2]string{"files", fmt.Sprint(p.Files)})
	}
	if p.Size > 0 || p.Installed {
		fields = append(fields, [2]string{"size", units.Size(p.Size)})
	}
	if p.ArchiveSize > 0 {
		fields = append(fields, [2]string{"download", units.Size(p.ArchiveSize)})
	}
	fields = append(fields, [2]string{"sha256", p.SHA256})
	for _, f := range fields {
		if f[1] != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
		}
	}
	if !p.Installed {
		fmt.Fprintf(tw, "installed:\tno%s\nversions:\t%s\n", tip, strings.Join(p.Versions, ", "))
		return tw.Flush()
	}
	req := "no (installed as a dependency)"
	switch {
	case p.Held:
		req = "yes, as " + p.Requested + " (held: upgrades keep it to that)"
	case p.Requested != "":
		req = "yes, as " + p.Requested
	}
	fmt.Fprintf(tw, "requested:\t%s\n", req)
	if p.Origin != "" {
		fmt.Fprintf(tw, "from:\t%s (a local archive file: upgrade leaves it)\n", termtext.Printable(p.Origin))
	}
	fmt.Fprintf(tw, "installed:\t%s\ndirectory:\t%s\n", p.InstalledAt.Local().Format(time.RFC3339), p.Directory)
	return tw.Flush()
}

// WriteText prints one line per package, its version marked "[installed]", or
// "[installed: V]" where another version is.
func (s Search) WriteText(w io.Writer) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, p := range s.Packages {
		v := p.Version
		switch p.Installed {
		case "":
		case p.Version:
			v += " [installed]"
		default:
			v += " [installed: " + p.Installed + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, v, p.Summary)
	}
	tw.Flush()
	for line := range strings.Lines(b.String()) {
		// No padding after a missing summary.
		if _, err := fmt.Fprintln(w, strings.TrimRight(line, " \n")); err != nil {
			return err
		}
	}
	return nil
}

// WriteText prints a table of the packages: installed, newest allowed, newest; then a line
// for each package held below the newest by the requirement it was asked for by, or by
// the local archive file it was installed from, and for each whose installed version the
// repository has from another archive or that a repair recorded without its entry.
func (o Outdated) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tINSTALLED\tALLOWED\tNEWEST")
	for _, p := range o.Packages {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, p.Installed, p.Allowed, p.Newest)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range o.Packages {
		var err error
		switch {
		case p.Held != "":
			_, err = fmt.Fprintf(w, "%s is held by its request %s\n", p.Name, p.Held)
		case p.Origin != "":
			_, err = fmt.Fprintf(w, "%s is installed from the local archive file %s: upgrade leaves it\n", p.Name, termtext.Printable(p.Origin))
		case p.Unused:
			_, err = fmt.Fprintf(w, "%s was asked for from repository %s, which is not in use or no longer offers it: upgrade leaves it\n", p.Name, p.HeldTo)
		case p.HeldTo != "":
			_, err = fmt.Fprintf(w, "%s is held to repository %s, which it was asked from\n", p.Name, p.HeldTo)
		}
		if err == nil && p.Republished {
			_, err = fmt.Fprintf(w, "the repository's entry of %s %s is not the one installed: upgrade installs it in its place\n", p.Name, p.Installed)
		}
		if err == nil && p.Bare {
			_, err = fmt.Fprintf(w, "%s %s was recorded by a repair without its dependencies, commands and libraries: upgrade records it again with the repository's entry\n", p.Name, p.Installed)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// WriteText says whether the package was asked for and which packages need it, through
// which chains; tip follows where nothing asked for needs it.
func (y Why) WriteText(w io.Writer, tip string) error {
	nv := y.Name + " " + y.Version
	if y.Requested != "" {
		fmt.Fprintf(w, "%s was asked for, as %s\n", nv, y.Requested)
	}
	switch {
	case len(y.NeededBy) == 0 && y.Requested == "":
		_, err := fmt.Fprintf(w, "%s was not asked for and no installed package needs it%s\n", nv, tip)
		return err
	case len(y.NeededBy) == 0:
		_, err := fmt.Fprintf(w, "%s is needed by no other installed package\n", nv)
		return err
	}
	fmt.Fprintf(w, "%s is needed by %s\n", nv, strings.Join(y.NeededBy, ", "))
	for _, ch := range y.Chains {
		fmt.Fprintf(w, "  %s\n", strings.Join(ch, " -> "))
	}
	if len(y.Chains) == 0 && y.Requested == "" {
		_, err := fmt.Fprintf(w, "no package that was asked for needs it%s\n", tip)
		return err
	}
	return nil
}

// WritePlan prints a line per change of plan, the plan of command (install, sync...), the
// packages it keeps (those with a Beside counted in one line), and a total.
func WritePlan(w io.Writer, plan *txn.Plan, command string) error {
	for _, ch := range plan.Changes {
		what := string(ch.Action) + " " + ch.Name + " " + ch.Version
		if ch.From != "" && ch.From != ch.Version {
			what = string(ch.Action) + " " + ch.Name + " " + ch.From + " to " + ch.Version
		}
		var about []string
		if ch.Why != "" {
			about = append(about, ch.Why)
		}
		if ch.WasRequested {
			about = append(about, "asked for until now, recorded as a dependency, as the lockfile has it")
		}
		if ch.Download > 0 {
			about = append(about, units.Size(ch.Download)+" to download")
		}
		if len(about) > 0 {
			what += " (" + strings.Join(about, "; ") + ")"
		}
		fmt.Fprintln(w, what)
	}
	for _, k := range plan.Unchanged {
		switch {
		case k.WasDependency:
			fmt.Fprintf(w, "%s %s is already installed, as a dependency: the %s would record it as asked for, so autoremove would keep it\n", k.Name, k.Version, command)
		case k.WasRequested:
			fmt.Fprintf(w, "%s %s is already installed, as asked for: the %s would record it as a dependency, as the lockfile has it, so autoremove would take it once nothing needs it\n", k.Name, k.Version, command)
		default:
			fmt.Fprintf(w, "%s %s is already installed\n", k.Name, k.Version)
		}
	}
	beside := 0
	for _, h := range plan.Held {
		if h.Beside != "" {
			beside++
			continue
		}
		fmt.Fprintf(w, "keep %s at %s: %s\n", h.Name, h.Version, heldWhy(h))
	}
	if beside > 0 {
		fmt.Fprintln(w, BesideText(beside))
	}
	for _, k := range plan.Kept {
		fmt.Fprintln(w, KeptText(k))
	}
	disk := units.Size(max(plan.Disk, -plan.Disk)) + " more disk space"
	if plan.Disk < 0 {
		disk = units.Size(-plan.Disk) + " of disk space freed"
	}
	_, err := fmt.Fprintf(w, "dry run: %s, %s to download, %s; nothing was changed\n", units.Count(len(plan.Changes), "change"), units.Size(plan.Download), disk)
	return err
}
