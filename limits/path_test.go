package limits

import (
	"strings"
	"testing"
)

// TestRemoveDotSegments: the examples of RFC 3986 §5.2.4 and §5.4 that are
// paths, and the paths a service routes as another.
func TestRemoveDotSegments(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/", "/"},
		{"", ""},
		{"/a/b/c/./../../g", "/a/g"},
		{"/a/b/c/.", "/a/b/c/"},
		{"/a/b/c/..", "/a/b/"},
		{"/..", "/"},
		{"/../../g", "/g"},
		{"/a//../b", "/a/b"},
		{"/a/./b/", "/a/b/"},
		{"/titles/./current", "/titles/current"},
		{"/x/../titles/current", "/titles/current"},
		{"/a/.b/..c/.../d", "/a/.b/..c/.../d"}, // no dot segment
		{"a/../b", "a/../b"},                   // not a path from the root
	} {
		if got := RemoveDotSegments(tt.in); got != tt.want {
			t.Errorf("RemoveDotSegments(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestMatchRemovesDotSegments: a presence write spelled with "." and ".."
// segments is a presence write.
func TestMatchRemovesDotSegments(t *testing.T) {
	l := Default()
	want, ok := l.Match("POST", "userpresence.xboxlive.com", "/users/xuid(2533274791234567)/devices/current/titles/current")
	if !ok {
		t.Fatal("no rule for a presence write")
	}
	for _, p := range []string{"/users/xuid(2533274791234567)/devices/current/titles/./current", "/users/xuid(2533274791234567)/devices/current/x/../titles/current"} {
		if got, ok := l.Match("POST", "userpresence.xboxlive.com", p); !ok || got.Scope() != want.Scope() {
			t.Errorf("Match(POST, %s) = %v %v, want %s", p, got, ok, want.Scope())
		}
	}
}

// TestRemoveDotSegmentsNoAllocation: a path without dot segments costs
// Match no allocation.
func TestRemoveDotSegmentsNoAllocation(t *testing.T) {
	p := "/users/xuid(2533274791234567)/devices/current/titles/current"
	if n := testing.AllocsPerRun(100, func() { _ = RemoveDotSegments(p) }); n != 0 {
		t.Errorf("%v allocations for a path without dot segments", n)
	}
}

// TestHasDotSegment: a segment "." or ".." counts, one that only begins
// with a dot (".well-known", "..b") does not; RemoveDotSegments returns
// such a path as it is, without allocating.
func TestHasDotSegment(t *testing.T) {
	for path, want := range map[string]bool{
		"/a/./b": true, "/a/../b": true, "/a/.": true, "/..": true,
		"/a/.b": false, "/a/..b": false, "/.well-known/x": false, "/a/b": false, "/": false, "": false,
	} {
		if got := hasDotSegment(path); got != want {
			t.Errorf("hasDotSegment(%q) = %v, want %v", path, got, want)
		}
		if !want && strings.HasPrefix(path, "/") {
			if n := testing.AllocsPerRun(10, func() { RemoveDotSegments(path) }); n != 0 {
				t.Errorf("RemoveDotSegments(%q): %v allocations, want none", path, n)
			}
		}
	}
}
