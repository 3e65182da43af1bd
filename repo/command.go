package repo

import "path"

// Command is a bin entry of a package: the name of a command in <root>/bin and the path of
// the command's file in the package. In JSON it is the entry's text, "NAME=PATH", or a PATH
// alone for a command named after its file; an "=" after a "/" is part of a PATH
// ("bin/a=b"). Index.check and the lockfile's checks validate it.
type Command struct {
	Name string
	Path string

	// named keeps the spelling of an entry read as "NAME=PATH" where PATH alone would
	// name the command so, so that indexes, lockfiles (whose digest covers the text) and
	// records keep their bytes. It is false for every other command.
	named bool
}

// ParseCommand splits a bin entry as it is written (a --bin flag, an index's bin list)
// into its command. It never fails: the index's checks say what is wrong with a command.
func ParseCommand(entry string) Command {
	for i := 0; i < len(entry); i++ {
		switch entry[i] {
		case '/':
			return Command{Name: path.Base(entry), Path: entry}
		case '=':
			c := Command{Name: entry[:i], Path: entry[i+1:]}
			c.named = pathCommand(c.Path) == c
			return c
		}
	}
	return Command{Name: path.Base(entry), Path: entry}
}

// pathCommand is the command of an entry written as the path p alone.
func pathCommand(p string) Command {
	if c := ParseCommand(p); c.Path == p {
		return c
	}
	return Command{} // p holds an "=" before any "/": it cannot stand alone
}

// String returns c as a bin entry: its Path alone when that names the command, else
// "NAME=PATH".
func (c Command) String() string {
	if !c.named && pathCommand(c.Path) == c {
		return c.Path
	}
	return c.Name + "=" + c.Path
}

// MarshalText returns c.String().
func (c Command) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText sets c to ParseCommand(text).
func (c *Command) UnmarshalText(text []byte) error {
	*c = ParseCommand(string(text))
	return nil
}

// Clean returns c with its path cleaned, as a member's name is: "./usr/bin/jq", as tar -t
// lists it, is "usr/bin/jq". A command whose entry would read otherwise once clean ("./a=b")
// is returned as it is.
func (c Command) Clean() Command {
	clean := Command{Name: c.Name, Path: path.Clean(c.Path)}
	if c.String() == c.Path && clean.String() != clean.Path { // the path alone would read otherwise
		return c
	}
	clean.named = c.named && pathCommand(clean.Path) == clean
	return clean
}
