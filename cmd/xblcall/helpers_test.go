package main

import (
	"io"
	"maps"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/xblgo/fgrl/transport"
)

var throttleErrForTest = transport.ThrottleError{Status: 429, Wait: 12e9, Local: true}

var _ http.RoundTripper = (*tracer)(nil)

// withStdin gives a command r as its standard input.
func withStdin(r io.Reader) func(*env) { return func(e *env) { e.stdin = r } }

// testEnvs holds each test's environment (setenv, setConfigDir), by test
// name.
var testEnvs sync.Map // t.Name() -> *testEnv

// testEnv is what the commands a test runs (xblcall, run with
// withTestEnv(t)) see in place of the process's environment: its
// variables over the process's, and its config directory, where the
// sign-in is stored. Tests set these rather than t.Setenv, which a
// parallel test may not call. A subtest's starts as a copy of its
// parent's.
type testEnv struct {
	mu        sync.Mutex
	vars      map[string]string
	configDir string // "" for os.UserConfigDir
}

// lookupTestEnv returns the environment of the test named name or of its
// nearest ancestor, or nil. Ancestors are found by the name's elements, so
// a subtest of a test with an environment must not hold '/' in its own
// name (t.Run("a/b") would be taken for a subtest of a sibling "a").
func lookupTestEnv(name string) *testEnv {
	for {
		if v, ok := testEnvs.Load(name); ok {
			return v.(*testEnv)
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return nil
		}
		name = name[:i]
	}
}

// ownTestEnv returns t's own environment, made the first time from its
// parent's; it is dropped when t ends.
func ownTestEnv(t *testing.T) *testEnv {
	if v, ok := testEnvs.Load(t.Name()); ok {
		return v.(*testEnv)
	}
	te := &testEnv{vars: map[string]string{}}
	if p := lookupTestEnv(t.Name()); p != nil {
		p.mu.Lock()
		maps.Copy(te.vars, p.vars)
		te.configDir = p.configDir
		p.mu.Unlock()
	}
	if v, loaded := testEnvs.LoadOrStore(t.Name(), te); loaded { // another goroutine of t made it first
		return v.(*testEnv)
	}
	t.Cleanup(func() { testEnvs.Delete(t.Name()) })
	return te
}

// setenv sets the variable key to value for the commands t (and its
// subtests) runs.
func setenv(t *testing.T, key, value string) {
	te := ownTestEnv(t)
	te.mu.Lock()
	defer te.mu.Unlock()
	te.vars[key] = value
}

// setConfigDir makes dir the config directory of the commands t (and its
// subtests) runs, as XDG_CONFIG_HOME would.
func setConfigDir(t *testing.T, dir string) {
	te := ownTestEnv(t)
	te.mu.Lock()
	defer te.mu.Unlock()
	te.configDir = dir
}

// configDirOf is the config directory setConfigDir gave t.
func configDirOf(t *testing.T) string {
	t.Helper()
	if te := lookupTestEnv(t.Name()); te != nil {
		te.mu.Lock()
		defer te.mu.Unlock()
		if te.configDir != "" {
			return te.configDir
		}
	}
	t.Fatal("the test has no config directory of its own (setConfigDir)")
	return ""
}

// withTestEnv gives a command t's environment, as it is now. A test that
// gave no config directory gets an empty one of its own, never the user's
// (os.UserConfigDir): a test must not read, renew or remove a developer's
// real sign-in, nor send its tokens anywhere.
func withTestEnv(t *testing.T) func(*env) {
	var vars map[string]string
	var dir string
	if te := lookupTestEnv(t.Name()); te != nil {
		te.mu.Lock()
		vars, dir = maps.Clone(te.vars), te.configDir
		te.mu.Unlock()
	}
	if dir == "" {
		dir = t.TempDir()
	}
	return func(e *env) {
		e.getenv = func(key string) string {
			if v, ok := vars[key]; ok {
				return v
			}
			return os.Getenv(key)
		}
		e.configDir = func() (string, error) { return dir, nil }
	}
}

// testEnvOf is t's environment as a command's, for the functions that
// take one.
func testEnvOf(t *testing.T) *env {
	e := &env{stdout: io.Discard, stderr: io.Discard, stdin: os.Stdin, getenv: os.Getenv, configDir: os.UserConfigDir}
	withTestEnv(t)(e)
	return e
}
