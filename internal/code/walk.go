package code

import (
	"context"
	"io/fs"
	"path"
	"strings"
	"time"
)

// maxWalk bounds the files a walk visits; past it the walk stops and says
// so.
const maxWalk = 20_000

// entry is a file found by a walk.
type entry struct {
	path  string
	size  int64
	mtime time.Time
}

// walk lists the regular files of the tree that git would not ignore,
// sorted by path, skipping .git, .fetch, links and special files. cut
// tells that maxWalk stopped it.
func (t *Tree) walk(ctx context.Context) (files []entry, cut bool, err error) {
	var ig ignorer
	fsys := t.root.FS()
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			// An unreadable directory or a file gone meanwhile: skip it.
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if p != "." && (skipped[d.Name()] || ig.ignored(p, true)) {
				return fs.SkipDir
			}
			t.loadIgnore(&ig, p)
			return nil
		}
		if !d.Type().IsRegular() || ig.ignored(p, false) {
			return nil
		}
		if len(files) >= maxWalk {
			cut = true
			return fs.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		files = append(files, entry{path: p, size: info.Size(), mtime: info.ModTime()})
		return nil
	})
	return files, cut, err
}

// loadIgnore adds the .gitignore of directory dir, if it has one.
func (t *Tree) loadIgnore(ig *ignorer, dir string) {
	p := path.Join(dir, ".gitignore")
	fi, err := t.root.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	data, _, _, err := t.readFile(p, maxIgnoreFile)
	if err != nil {
		return
	}
	base := dir
	if base == "." {
		base = ""
	}
	ig.add(base, data)
}

// ignoredPath reports whether rel, or a directory on the way to it, is
// ignored by the .gitignore files along its path.
func (t *Tree) ignoredPath(rel string) bool {
	var ig ignorer
	t.loadIgnore(&ig, ".")
	parts := strings.Split(rel, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		last := i == len(parts)-1
		if ig.ignored(p, !last) {
			return true
		}
		if !last {
			t.loadIgnore(&ig, p)
		}
	}
	return false
}
