package limits

import "strings"

// RemoveDotSegments returns path without its "." and ".." segments, as RFC
// 3986 §5.2.4 (remove_dot_segments) resolves it and a service routes it: a
// ".." removes the segment before it, and a "." or ".." that ends the path
// leaves a trailing '/' ("/a/b/.." is "/a/"). Match matches a path so. A
// path that holds no such segment, or does not start with '/', is returned
// as it is, without allocating.
func RemoveDotSegments(path string) string {
	// A dot segment follows a '/': a path without "/." has none, which
	// one Contains tells (Match's hot path) before segments are walked.
	if !strings.HasPrefix(path, "/") || !strings.Contains(path, "/.") || !hasDotSegment(path) {
		return path
	}
	segs := strings.Split(path[1:], "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		switch s {
		case ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, s)
			continue
		}
		if i == len(segs)-1 {
			out = append(out, "")
		}
	}
	return "/" + strings.Join(out, "/")
}

// hasDotSegment reports whether path holds a segment "." or "..".
func hasDotSegment(path string) bool {
	for path != "" {
		seg, rest, _ := strings.Cut(path, "/")
		if seg == "." || seg == ".." {
			return true
		}
		path = rest
	}
	return false
}
