// Package docs holds the user and operator documentation; its test checks the
// links of the pages and of the README.
package docs

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// mdLink matches a Markdown link or image and captures its target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// TestDocLinks checks every relative link of the READMEs and docs/: the file
// or folder it names exists and, when it names a heading of a Markdown page,
// so does the heading. Every page of docs/ is linked from the README and from
// the index, docs/README.md.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	pages := readPages(t)
	headings := map[string]map[string]bool{} // page → the anchors of its headings
	linked := map[string]map[string]bool{}   // page → the pages it links to
	for _, p := range pages {
		linked[p.path] = map[string]bool{}
		for _, m := range mdLink.FindAllStringSubmatch(outsideCode(p.text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, fragment, _ := strings.Cut(target, "#")
			if file == "" {
				file = p.path
			} else {
				file = path.Clean(path.Join(path.Dir(p.path), file))
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(file))); err != nil {
				t.Errorf("%s links to %s: %v", p.path, target, err)
				continue
			}
			linked[p.path][file] = true
			if fragment == "" || !strings.HasSuffix(file, ".md") {
				continue
			}
			if headings[file] == nil {
				b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
				if err != nil {
					t.Fatal(err)
				}
				headings[file] = anchors(string(b))
			}
			if !headings[file][fragment] {
				t.Errorf("%s links to %s: %s has no heading #%s", p.path, target, file, fragment)
			}
		}
	}
	for _, p := range pages {
		if !strings.HasPrefix(p.path, "docs/") {
			continue
		}
		for _, from := range []string{"README.md", "docs/README.md"} {
			if from != p.path && !linked[from][p.path] {
				t.Errorf("%s does not link to %s", from, p.path)
			}
		}
	}
}

// root is the repository's root, seen from this folder.
const root = ".."

// page is a README or a page of docs/.
type page struct {
	path string // from the repository's root, with slashes
	text string
}

// readPages reads the READMEs (the repository's and the SDKs') and every page
// of docs/, in its subfolders too.
func readPages(t *testing.T) []page {
	t.Helper()
	paths := []string{"README.md", "sdk/node/README.md", "sdk/node-client/README.md", "sdk/python/README.md"}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			paths = append(paths, "docs/"+filepath.ToSlash(p))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	pages := make([]page, 0, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, page{p, string(b)})
	}
	return pages
}

// outsideCode returns text without its fenced code blocks, whose lines are
// neither links nor headings.
func outsideCode(text string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// anchors returns the anchors GitHub gives the headings of a Markdown page:
// lower case, spaces as hyphens, punctuation dropped, and -1, -2… after a
// repeated one.
func anchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, line := range strings.Split(outsideCode(text), "\n") {
		title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") || len(line)-len(strings.TrimLeft(line, "#")) > 6 {
			continue
		}
		var a strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(strings.TrimRight(title, "# "))) {
			switch {
			case r == ' ':
				a.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
				a.WriteRune(r)
			}
		}
		anchor := a.String()
		if n := seen[anchor]; n > 0 {
			out[anchor+"-"+strconv.Itoa(n)] = true
		} else {
			out[anchor] = true
		}
		seen[anchor]++
	}
	return out
}
