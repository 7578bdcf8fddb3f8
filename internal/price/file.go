package price

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// FileFormat describes a price file, for help texts and errors.
const FileFormat = "MODEL INPUT OUTPUT CACHE_READ CACHE_WRITE DATE SOURCE: dollars per million tokens (CACHE_WRITE 0: as INPUT), the date the prices were read (2025-10-07 or 2025-10) and where, one model a line; # starts a comment"

// ErrFormat is the error of a price file line that is not FileFormat.
var ErrFormat = errors.New("price: not a price line")

var (
	modelName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]*(\[[A-Za-z0-9]+\])?$`)
	readDate  = regexp.MustCompile(`^\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$`)
)

// Parse reads price entries, one a line:
//
//	# model            input output cache_read cache_write date       source
//	claude-sonnet-4-5  3     15     0.30       3.75        2025-09-29 https://docs.anthropic.com/en/docs/about-claude/pricing
//
// Blank lines and lines starting with # are skipped. name names the
// input in errors, which give the line: a file with any malformed line is
// refused whole.
func Parse(r io.Reader, name string) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w (want %s)", name, n, err, FileFormat)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

func parseLine(line string) (Entry, error) {
	f := strings.Fields(line)
	if len(f) < 7 {
		return Entry{}, fmt.Errorf("%w: %d fields, want at least 7", ErrFormat, len(f))
	}
	if !modelName.MatchString(f[0]) {
		return Entry{}, fmt.Errorf("%w: %q is not a model name", ErrFormat, f[0])
	}
	var rates [4]float64
	for i, what := range []string{"input", "output", "cache read", "cache write"} {
		v, err := strconv.ParseFloat(f[1+i], 64)
		if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return Entry{}, fmt.Errorf("%w: the %s price %q is not a number of dollars of at least 0", ErrFormat, what, f[1+i])
		}
		rates[i] = v
	}
	if !readDate.MatchString(f[5]) {
		return Entry{}, fmt.Errorf("%w: %q is not a date such as 2025-10-07", ErrFormat, f[5])
	}
	return Entry{
		Model:  f[0],
		Rates:  Rates{Input: rates[0], Output: rates[1], CachedInput: rates[2], CacheWrite: rates[3]},
		Date:   f[5],
		Source: strings.Join(f[6:], " "),
	}, nil
}

// ParseFile reads the price file at path (Parse) and returns the built-in
// table extended by it: a model it names is priced by the file.
func ParseFile(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("price file: %w", err)
	}
	defer f.Close()
	entries, err := Parse(f, path)
	if err != nil {
		return nil, err
	}
	return Builtin().With(entries...), nil
}
