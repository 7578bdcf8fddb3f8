package gitrun

import (
	"bytes"
	"encoding/base64"
	"fmt"

	"github.com/fetch-dev/fetch/kennel/shim"
)

// OutFile is a file a task's CLI left for the owner in its work tree's out
// folder, or one that was not taken (Skipped says why); OutLimits bound
// what is taken (shim.CmdOutfiles).
type (
	OutFile   = shim.OutFile
	OutLimits = shim.OutLimits
)

// OutStep is the step that takes the files in the folder root/rel (rel
// relative, reached without following a symlink) within l, and empties
// it: the shim's outfiles command. l.Total is held to what one batch's
// output carries (shim.MaxOutTotal).
func OutStep(root, rel string, l OutLimits) Step {
	l.Total = min(l.Total, shim.MaxOutTotal)
	return Step{Argv: shim.OutfilesArgv(root, rel, l), Base64: true, AllowFail: true}
}

// ReadOut reads the files an OutStep printed (kennel output, held to l
// again). A kennel whose shim is older than this Fetch took nothing
// (ErrOldShim).
func ReadOut(r StepResult, l OutLimits) ([]OutFile, error) {
	l.Total = min(l.Total, shim.MaxOutTotal)
	if r.OldShim() {
		return nil, ErrOldShim
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	if r.Truncated {
		return nil, fmt.Errorf("out files: over what one exec's output holds")
	}
	data, err := base64.StdEncoding.DecodeString(r.Stdout)
	if err != nil {
		return nil, fmt.Errorf("out files: %w", err)
	}
	return shim.ReadOutfiles(bytes.NewReader(data), l)
}
