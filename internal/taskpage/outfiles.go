package taskpage

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strconv"

	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/task"
)

// The files a task's CLI left for the owner (task.OutFile) are listed on
// its page and served under the page's link: a picture (PNG, JPEG, GIF,
// WebP, by its content) shown inline, anything else as a download. Never
// SVG or HTML inline: a picture or page that runs script. Each answer is
// sandboxed besides the page's own headers (nosniff, no caching).

// outView is a file the page lists.
type outView struct {
	Name, Size, Href, Skipped string
	Image                     bool
	Run                       int
}

// outFiles lists t's out files for its page; q is the page's signed
// query, which the files' links carry.
func (s *Server) outFiles(ctx context.Context, t task.Task, q url.Values) []outView {
	files, err := s.cfg.Tasks.OutFiles(ctx, t.ID)
	if err != nil {
		s.log.Warn("list a task's out files", "task", t.ID, "err", err)
		return nil
	}
	var out []outView
	for _, f := range files {
		v := outView{Name: s.clean(f.Name), Run: f.Run, Skipped: s.clean(f.Skipped)}
		if f.Skipped == "" && f.Path != "" {
			v.Size = progress.Size(f.Size)
			v.Image = f.IsImage()
			v.Href = url.PathEscape(t.ID) + "/out/" + strconv.Itoa(f.Run) + "/" + url.PathEscape(f.Name) + "?" + q.Encode()
		}
		out = append(out, v)
	}
	return out
}

// outFile serves one out file of a task.
func (s *Server) outFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := s.cfg.Links.taskAccess(id, r.URL.Query()); err != nil {
		s.denied(w, err)
		return
	}
	run, err := strconv.Atoi(r.PathValue("run"))
	if err != nil || run < 1 {
		http.NotFound(w, r)
		return
	}
	f, err := s.cfg.Tasks.OutFileData(r.Context(), id, run, r.PathValue("name"))
	if errors.Is(err, task.ErrNotFound) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		s.fail(w, "read an out file", err)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	data := f.Data
	if f.IsImage() {
		h.Set("Content-Type", f.MediaType)
		h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": f.Name}))
	} else {
		// What the page shows holds no secret: masked as the rest.
		data = s.cfg.Redactor.Bytes(data)
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	}
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.Write(data)
}
