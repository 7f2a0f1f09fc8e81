package mock

import (
	"bufio"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// maxVisited bounds the files of package mock one request runs code in:
// the pipeline's stages in one place, and each service answering alone
// (issue 40; 13 files before).
const maxVisited = 6

// TestRequestVisitsFewFiles: a counted, served profile read and a 429 run
// code in the files docs/ARCHITECTURE.md names ("A request through the
// mock"), at most maxVisited of package mock. It builds
// testdata/visits with coverage, which serves one request with the
// counters cleared before it, and reads the files whose counters moved.
func TestRequestVisitsFewFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "visits")
	build := exec.Command(goTool, "build", "-cover", "-covermode=atomic", "-coverpkg=.,./testdata/visits", "-o", bin, "./testdata/visits")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tests := []struct {
		name string
		want []string
	}{
		{"served", []string{"journal.go", "pipeline.go", "profile.go", "route.go", "token.go", "world.go"}},
		{"429", []string{"inject.go", "journal.go", "pipeline.go", "route.go", "token.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cov := filepath.Join(dir, tt.name)
			if err := os.Mkdir(cov, 0o755); err != nil {
				t.Fatal(err)
			}
			run := exec.Command(bin, tt.name)
			run.Env = append(os.Environ(), "GOCOVERDIR="+cov)
			if out, err := run.CombinedOutput(); err != nil {
				t.Fatalf("visits %s: %v\n%s", tt.name, err, out)
			}
			text := filepath.Join(dir, tt.name+".txt")
			if out, err := exec.Command(goTool, "tool", "covdata", "textfmt", "-i", cov, "-o", text).CombinedOutput(); err != nil {
				t.Fatalf("go tool covdata: %v\n%s", err, out)
			}
			got := visited(t, text)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("files of package mock a %s request runs code in (-want +got):\n%s", tt.name, diff)
			}
			if len(got) > maxVisited {
				t.Errorf("a %s request runs code in %d files of package mock, over %d", tt.name, len(got), maxVisited)
			}
		})
	}
}

// visited returns the files of package mock, sorted, that a coverage
// profile in text form ran a statement of.
func visited(t *testing.T, profile string) []string {
	t.Helper()
	f, err := os.Open(profile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const pkg = "github.com/xblgo/fgrl/mock/"
	files := []string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// name.go:line.col,line.col statements count
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || fields[2] == "0" {
			continue
		}
		file, _, _ := strings.Cut(fields[0], ":")
		if rest, ok := strings.CutPrefix(file, pkg); ok && !strings.Contains(rest, "/") && !slices.Contains(files, path.Base(rest)) {
			files = append(files, rest)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}
