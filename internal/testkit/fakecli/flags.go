package main

import (
	"flag"
	"io"
)

// flags is a flag set that reports errors like a CLI's own parser: a usage
// message and exit code 2.
type flags struct{ *flag.FlagSet }

func newFlags(name string, stderr io.Writer) flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return flags{fs}
}

// str defines a string flag under several names (-m and --model).
func (f flags) str(p *string, names ...string) {
	for _, n := range names {
		f.StringVar(p, n, "", "")
	}
}

// boolean defines a boolean flag under several names.
func (f flags) boolean(p *bool, names ...string) {
	for _, n := range names {
		f.BoolVar(p, n, false, "")
	}
}

// parse parses args and returns the positional arguments.
func (f flags) parse(args []string) ([]string, error) {
	if err := f.Parse(args); err != nil {
		return nil, usagef("%v", err)
	}
	return f.Args(), nil
}
