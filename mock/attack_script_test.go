package mock

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAttackBodyFileOutsideScriptDir: a body file is named "relative to
// the script's file", but LoadScript joins the name to the script's
// directory as it is, so "../" climbs out of it: a script taken from
// elsewhere (a fixture, a bug report) run with xblcall mock --script
// serves any file the user can read (~/.ssh, a sign-in file's refresh
// token, /proc/self/environ) as an answer's body, to anyone who reaches
// the mock.
func TestAttackBodyFileOutsideScriptDir(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"scripts", "private"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "private", "secret"), []byte("refresh-token-of-the-user"), 0o600)
	for _, tc := range []struct{ name, bodyFile string }{
		{"parent directory", "../private/secret"},
		{"down and back up", "x/../../private/secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := filepath.Join(dir, "scripts", "s.yaml")
			os.WriteFile(script, []byte("rules:\n  - answers: [{bodyFile: \""+tc.bodyFile+"\"}]\n"), 0o600)
			s, err := LoadScript(script)
			if err == nil {
				t.Errorf("bodyFile %q read, body %s; want it refused: outside the script's directory", tc.bodyFile, s.Rules[0].Answers[0].Body)
			}
		})
	}
}
