package xblsign

// Check reports whether p is a policy Sign and Verify work under: a
// version of at least 1, ES256 among its algorithms, and a MaxBodyBytes
// from 0 to MaxBodyBytes. Its error wraps ErrPolicy.
func (p Policy) Check() error { return p.check() }
