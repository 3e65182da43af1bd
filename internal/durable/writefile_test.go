package durable

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestWriteFile replaces a file, readable by all, and leaves it and the directory as they
// were when the writer fails.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "index.json")
	if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFile(dir, "index.json", ".index.json.tmp-*", func(w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("a failed write: %v, want its error", err)
	}
	if b, _ := os.ReadFile(name); string(b) != "old" {
		t.Errorf("a failed write left %q, want the old file", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("a failed write left %d files, want the old one alone", len(ents))
	}
	if err := WriteFile(dir, "index.json", ".index.json.tmp-*", func(w io.Writer) error {
		_, err := w.Write([]byte("new"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(name)
	if b, _ := os.ReadFile(name); string(b) != "new" || err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the file is %q, mode %v, want \"new\", 0644", b, fi.Mode())
	}
}

// TestReplaceFile keeps the permissions of the file it replaces, whatever they are, and
// makes a new file 0644.
func TestReplaceFile(t *testing.T) {
	dir := t.TempDir()
	write := func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }
	for _, mode := range []os.FileMode{0o600, 0o664, 0o640} {
		name := filepath.Join(dir, "pkg.lock")
		if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(name, mode); err != nil { // whatever the umask
			t.Fatal(err)
		}
		if err := ReplaceFile(dir, "pkg.lock", ".pkg.lock.tmp-*", write); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("a file of mode %v replaced: %v, %v", mode, fi.Mode(), err)
		}
	}
	if err := ReplaceFile(dir, "new.lock", ".new.lock.tmp-*", write); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "new.lock")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("a new file: %v, %v; want 0644", fi.Mode(), err)
	}
}

// TestReplaceFileOwner replaces, as root, a user's file: it stays the user's, of their
// group and mode, as after sudo pkg lock on a user's lockfile.
func TestReplaceFileOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root gives a file away")
	}
	const nobody = 65534
	dir := t.TempDir()
	name := filepath.Join(dir, "pkg.lock")
	err := os.WriteFile(name, []byte("old"), 0o600)
	if err == nil {
		err = errors.Join(os.Chown(name, nobody, nobody), os.Chmod(name, 0o640))
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := ReplaceFile(dir, "pkg.lock", ".pkg.lock.tmp-*", func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != nobody || st.Gid != nobody || fi.Mode().Perm() != 0o640 {
		t.Errorf("a file of nobody's, mode 0640, replaced by root: owner %d, group %d, mode %v; want nobody's, 0640", st.Uid, st.Gid, fi.Mode().Perm())
	}
}

// TestReplaceFileGroup keeps the group of the file it replaces, one its writer is a
// member of (root is of all), so that a lockfile a group shares stays theirs; where the
// writer is not a member, the new file is of the writer's group with the others'
// permissions in the group's place (run as nobody, by root).
func TestReplaceFileGroup(t *testing.T) {
	if os.Getenv("DURABLE_TEST_FOREIGN") != "" {
		dir := os.Getenv("DURABLE_TEST_FOREIGN")
		if err := ReplaceFile(dir, "pkg.lock", ".pkg.lock.tmp-*", func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
			t.Fatal(err)
		}
		return
	}
	gid := 2000 // any, as root
	if os.Geteuid() != 0 {
		groups, _ := os.Getgroups()
		i := slices.IndexFunc(groups, func(g int) bool { return g != os.Getegid() })
		if i < 0 {
			t.Skip("not root, and in no group but the primary one")
		}
		gid = groups[i]
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "pkg.lock")
	if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(name, -1, gid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, 0o660); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceFile(dir, "pkg.lock", ".pkg.lock.tmp-*", func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(name); err != nil || fi.Sys().(*syscall.Stat_t).Gid != uint32(gid) || fi.Mode().Perm() != 0o660 {
		t.Errorf("a file of group %d, mode 0660, replaced: %v, %+v", gid, err, fi)
	}

	if os.Geteuid() != 0 {
		return
	}
	const nobody = 65534
	shared, err := os.MkdirTemp("", "durable-foreign-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(shared)
	bin := filepath.Join(shared, "durable.test")
	exe, err := os.ReadFile(os.Args[0])
	if err == nil {
		err = os.WriteFile(bin, exe, 0o755)
	}
	for _, e := range []error{err, os.Chmod(shared, 0o755), os.Mkdir(filepath.Join(shared, "d"), 0o755), os.Chown(filepath.Join(shared, "d"), nobody, nobody)} {
		if e != nil {
			t.Fatal(e)
		}
	}
	name = filepath.Join(shared, "d", "pkg.lock")
	if err := os.WriteFile(name, []byte("old"), 0o600); err == nil {
		err = errors.Join(os.Chown(name, nobody, gid), os.Chmod(name, 0o664))
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestReplaceFileGroup$")
	cmd.Env = append(os.Environ(), "DURABLE_TEST_FOREIGN="+filepath.Join(shared, "d"))
	cmd.Dir = shared
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ReplaceFile as nobody: %v\n%s", err, out)
	}
	if fi, err := os.Stat(name); err != nil || fi.Sys().(*syscall.Stat_t).Gid != nobody || fi.Mode().Perm() != 0o644 {
		t.Errorf("a file of group %d, mode 0664, replaced by nobody, of another group: %v, %+v; want group nobody, mode 0644", gid, err, fi)
	}
}
