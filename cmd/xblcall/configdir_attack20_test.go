package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// attack20Binary is xblcall built as a user installs it (builtXblcall).
func attack20Binary(t *testing.T) string {
	t.Helper()
	return filepath.Join(installXblcall(t), "xblcall")
}

// attack20Run runs the built xblcall in dir with exactly env, bounded by limit.
func attack20Run(t *testing.T, limit time.Duration, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, attack20Binary(t), args...)
	var out, errb bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("xblcall %q: %v", args, err)
	}
	return code, out.String(), errb.String()
}

// attack20Tree lists every path under root (relative) with its mode.
func attack20Tree(t *testing.T, root string) []string {
	t.Helper()
	var got []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		info, _ := d.Info()
		rel, _ := filepath.Rel(root, p)
		got = append(got, fmt.Sprintf("%s %v", rel, info.Mode()))
		return nil
	})
	sort.Strings(got)
	return got
}

// held: README "stores them (0600, in the user's config directory ...)",
// xblcall help login "stored in the user's config directory
// (fgrl/signin.json, mode 0600)" and the brief's "Users must see NO change".
// The built binary, with XDG_CONFIG_HOME set, unset and empty (HOME set),
// runs login --via, whoami, call and logout: the sign-in is exactly
// $XDG_CONFIG_HOME/fgrl/signin.json or $HOME/.config/fgrl/signin.json,
// 0600, nothing lands in the working directory or anywhere else, no lock
// is left, logout removes the file. With a relative XDG_CONFIG_HOME or
// neither variable every sign-in command fails naming why, and writes
// nothing (also compared by hand with 04447df^'s binary: identical output
// and files but for the random device code).
func TestAttack20BinarySignInFileWhereDocumented(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	profile := "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
	t.Run("group", func(group *testing.T) { attack20SignInCases(group, srv.URL, profile) })
}

func attack20SignInCases(group *testing.T, srvURL, profile string) {
	for _, tc := range []struct {
		name string
		xdg  *string // nil: unset
		home bool
		want string // the sign-in's path under the sandbox; "" for none possible
		fail string // the failure every command names
	}{
		{"xdg set", new("ABS/xdg"), true, "xdg/fgrl/signin.json", ""},
		{"xdg unset", nil, true, "home/.config/fgrl/signin.json", ""},
		{"xdg empty", new(""), true, "home/.config/fgrl/signin.json", ""},
		{"xdg relative", new("rel"), true, "", "no config directory for the sign-in: path in $XDG_CONFIG_HOME is relative"},
		{"no home, no xdg", nil, false, "", "no config directory for the sign-in: neither $XDG_CONFIG_HOME nor $HOME are defined"},
		{"xdg set, no home", new("ABS/xdg"), false, "xdg/fgrl/signin.json", ""},
	} {
		group.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sb := t.TempDir()
			cwd := filepath.Join(sb, "cwd")
			os.MkdirAll(cwd, 0o755)
			os.MkdirAll(filepath.Join(sb, "home"), 0o755)
			env := []string{"PATH=" + os.Getenv("PATH")}
			if tc.home {
				env = append(env, "HOME="+filepath.Join(sb, "home"))
			}
			if tc.xdg != nil {
				env = append(env, "XDG_CONFIG_HOME="+strings.Replace(*tc.xdg, "ABS", sb, 1))
			}
			before := attack20Tree(t, sb)
			steps := [][]string{{"login", "--via", srvURL}, {"whoami"}, {"call", profile}, {"logout"}}
			for i, args := range steps {
				code, out, errs := attack20Run(t, 60*time.Second, cwd, env, args...)
				if tc.want == "" {
					if code == 0 || !strings.Contains(errs, tc.fail) {
						t.Errorf("%v: exit %d, stderr %q; want a failure naming %q", args, code, errs, tc.fail)
					}
					if got := attack20Tree(t, sb); strings.Join(got, ",") != strings.Join(before, ",") {
						t.Errorf("%v with no config directory wrote %v (before %v)", args, got, before)
					}
					continue
				}
				if code != 0 {
					t.Fatalf("%v: exit %d: %s%s", args, code, out, errs)
				}
				got := attack20Tree(t, sb)
				var files []string
				for _, g := range got {
					if !strings.HasPrefix(g, "cwd ") && !strings.HasPrefix(g, "home ") && !strings.HasSuffix(g, " drwx------") {
						files = append(files, g)
					}
				}
				want := []string{tc.want + " -rw-------"}
				if i == len(steps)-1 { // logout
					want = nil
				}
				if strings.Join(files, ",") != strings.Join(want, ",") {
					t.Errorf("after %v the sandbox holds the files %v; want %v (the documented place, 0600, no lock left, nothing in the working directory)", args, files, want)
				}
				if e, _ := os.ReadDir(cwd); len(e) != 0 {
					t.Errorf("after %v the working directory holds %v", args, e)
				}
			}
		})
	}
}

// held: brief item 2 and README "stores them ... in the user's config
// directory": two xblcall processes at once, each its own XDG_CONFIG_HOME
// and its own mock, log in, whoami and call, four rounds; each sign-in file
// names only its own process's mock, and nothing is written under
// $HOME/.config.
func TestAttack20BinaryTwoConfigDirsAtOnce(t *testing.T) {
	t.Parallel()
	var urls [2]string
	for i := range 2 {
		srv := httptest.NewServer(mock.NewHandler())
		defer srv.Close()
		urls[i] = srv.URL
	}
	sb := t.TempDir()
	profile := "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
	for round := range 4 {
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				xdg := filepath.Join(sb, fmt.Sprint("cfg", i))
				env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + sb, "XDG_CONFIG_HOME=" + xdg}
				for _, args := range [][]string{{"login", "--via", urls[i]}, {"whoami"}, {"call", profile}} {
					if code, out, errs := attack20Run(t, 60*time.Second, sb, env, args...); code != 0 {
						t.Errorf("round %d, process %d, %v: exit %d: %s%s", round, i, args, code, out, errs)
						return
					}
				}
				b, err := os.ReadFile(filepath.Join(xdg, "fgrl", "signin.json"))
				var st stored
				if err != nil || json.Unmarshal(b, &st) != nil || st.Via != urls[i] {
					t.Errorf("round %d: process %d's sign-in (%v) names the mock %q; want its own %q", round, i, err, st.Via, urls[i])
				}
			}()
		}
		wg.Wait()
	}
	if _, err := os.Stat(filepath.Join(sb, ".config")); err == nil {
		t.Errorf("a process with XDG_CONFIG_HOME set wrote under $HOME/.config")
	}
}

// held: xblcall help login "A command that writes or removes them (login,
// logout, a renewal) holds the file fgrl/signin.json.lock meanwhile" and
// RELIABILITY.md's lock rows: with XDG_CONFIG_HOME set and unset, a held
// lock at $CONFIG/fgrl/signin.json.lock (the place it always was) makes the
// built logout wait and say so naming that very file, and the sign-in
// stays; a lock at any other place (the working directory, $HOME/fgrl)
// does not hold it up.
func TestAttack20BinaryLockBesideTheSignIn(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	t.Run("group", func(group *testing.T) { attack20LockCases(group, srv.URL) })
}

func attack20LockCases(group *testing.T, srvURL string) {
	for _, setXDG := range []bool{true, false} {
		group.Run(fmt.Sprint("xdg ", setXDG), func(t *testing.T) {
			t.Parallel()
			sb := t.TempDir()
			home := filepath.Join(sb, "home")
			os.MkdirAll(home, 0o755)
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
			cfg := filepath.Join(home, ".config")
			if setXDG {
				cfg = filepath.Join(sb, "xdg")
				env = append(env, "XDG_CONFIG_HOME="+cfg)
			}
			if code, out, errs := attack20Run(t, 60*time.Second, sb, env, "login", "--via", srvURL); code != 0 {
				t.Fatalf("login: exit %d: %s%s", code, out, errs)
			}
			p := filepath.Join(cfg, "fgrl", "signin.json")
			// Decoys where a refactor might have put it: no wait.
			os.WriteFile(filepath.Join(sb, "signin.json.lock"), nil, 0o600)
			os.MkdirAll(filepath.Join(home, "fgrl"), 0o700)
			os.WriteFile(filepath.Join(home, "fgrl", "signin.json.lock"), nil, 0o600)
			if !setXDG {
				os.MkdirAll(filepath.Join(sb, "xdg", "fgrl"), 0o700)
				os.WriteFile(filepath.Join(sb, "xdg", "fgrl", "signin.json.lock"), nil, 0o600)
			}
			os.WriteFile(p+".lock", nil, 0o600)
			start := time.Now()
			code, _, errs := attack20Run(t, 2500*time.Millisecond, sb, env, "logout")
			if code == 0 || !strings.Contains(errs, "waiting for another xblcall to release the stored sign-in's lock") || !strings.Contains(errs, p+".lock") {
				t.Errorf("logout behind a held %s: exit %d after %v, stderr %q; want it to wait, naming that lock", p+".lock", code, time.Since(start), errs)
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("logout behind a held lock removed the sign-in: %v", err)
			}
			os.Remove(p + ".lock")
			if code, out, errs := attack20Run(t, 20*time.Second, sb, env, "logout"); code != 0 || out != "signed out\n" {
				t.Errorf("logout with only decoy locks: exit %d: %q %q", code, out, errs)
			}
			if _, err := os.Stat(p); err == nil {
				t.Errorf("logout left %s", p)
			}
		})
	}
}

// held (a break at 51f4477, fixed: withTestEnv gives a test without a config directory an empty one of its own): the brief's "A test that touches the real
// home is a break (tests must be hermetic)", and helpers_test.go's
// testEnv godoc "its config directory, where the sign-in is stored. Tests
// set these rather than t.Setenv". TestUsageErrors (parallel, no
// setConfigDir) runs `xblcall call https://profile.xboxlive.com/`, which
// reads the stored sign-in: withTestEnv leaves e.configDir as
// os.UserConfigDir, the developer's real ~/.config/fgrl/signin.json. Here
// the "real home" is a sentinel (HOME and XDG_CONFIG_HOME, set only while
// no parallel test runs) whose sign-in names a loopback mock: if the test
// reads it, the mock is sent its tokens. A developer signed in for real
// would see TestUsageErrors fail and send their Microsoft tokens to
// login.live.com / xboxlive.com (and may get their signin.json renewed).
func TestAttack20HarnessReachesRealHome(t *testing.T) {
	// Serial: it changes the process's HOME and XDG_CONFIG_HOME (os.Setenv,
	// restored, so that TestUsageErrors may still call t.Parallel).
	var hits atomic.Int32
	h := mock.NewHandler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	home := t.TempDir()
	cfg := filepath.Join(home, ".config")
	// A real sign-in in the sentinel home, made by the built login.
	if code, out, errs := attack20Run(t, 60*time.Second, home, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}, "login", "--via", srv.URL); code != 0 {
		t.Fatalf("login: exit %d: %s%s", code, out, errs)
	}
	p := filepath.Join(cfg, "fgrl", "signin.json")
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME"} {
		old, had := os.LookupEnv(k)
		t.Cleanup(func() {
			if had {
				os.Setenv(k, old)
			} else {
				os.Unsetenv(k)
			}
		})
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", cfg)
	hits.Store(0)
	t.Run("group", func(t *testing.T) {
		t.Run("TestUsageErrors", TestUsageErrors)
	})
	if n := hits.Load(); n > 0 {
		t.Errorf("TestUsageErrors read the user's own stored sign-in (%s, os.UserConfigDir) and sent its tokens: %d requests reached the mock it names; "+
			"a parallel test without setConfigDir reaches the real ~/.config/fgrl (tests must be hermetic). "+
			"Fix: withTestEnv/testEnvOf should default e.configDir to a per-test temp directory (or fail) rather than os.UserConfigDir, "+
			"or TestMain should point HOME and XDG_CONFIG_HOME at a temp directory", p, n)
	}
}

// held: the registry under -race: 32 parallel subtests each setenv and
// setConfigDir their own values while running commands with withTestEnv
// and reading testEnvOf; every one sees its own, none another's.
func TestAttack20RegistryParallelIsolation(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	for i := range 32 {
		t.Run(fmt.Sprint("s", i), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for j := range 20 {
				setenv(t, "ATK_VAR", fmt.Sprint(i, "-", j))
				setConfigDir(t, dir)
				e := testEnvOf(t)
				if got, _ := e.configDir(); got != dir {
					t.Fatalf("config dir %s, want %s", got, dir)
				}
				if got := e.getenv("ATK_VAR"); got != fmt.Sprint(i, "-", j) {
					t.Fatalf("ATK_VAR %q, want %q", got, fmt.Sprint(i, "-", j))
				}
				if code, _, errs := xblcall(t, "whoami"); code != 1 || !strings.Contains(errs, "not signed in") {
					t.Fatalf("whoami in an empty config dir: exit %d %q", code, errs)
				}
			}
		})
	}
}

// held: helpers_test.go's setenv "sets the variable key to value for the
// commands t (and its subtests) runs", from 8 goroutines of one test at
// once, 200 times (ownTestEnv's Load-then-Store could let two first calls
// make two environments, one dropped): no variable was lost in our runs,
// with and without -race (the window is narrow; LoadOrStore would close it).
func TestAttack20RegistryConcurrentSetenv(t *testing.T) {
	t.Parallel()
	lost := 0
	for r := range 200 {
		t.Run(fmt.Sprint("r", r), func(t *testing.T) {
			var wg sync.WaitGroup
			start := make(chan struct{})
			for k := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					setenv(t, fmt.Sprint("ATK_K", k), "v")
				}()
			}
			close(start)
			wg.Wait()
			e := testEnvOf(t)
			for k := range 8 {
				if e.getenv(fmt.Sprint("ATK_K", k)) != "v" {
					lost++
					break
				}
			}
		})
	}
	if lost > 0 {
		t.Errorf("in %d of 200 subtests a variable set by setenv from one of 8 goroutines was lost (setenv: \"sets the variable key to value for the commands t runs\"). "+
			"Fix: ownTestEnv should use testEnvs.LoadOrStore", lost)
	}
}
