package throttle

import (
	"encoding/json"
	"errors"
	"time"
)

// Duration is a time.Duration whose JSON is a Go duration string ("1.5s",
// "2m0s"): the one form of a duration in every JSON the project writes or
// reads (the mock's admin API and files, reports, --json outputs), where
// instants are RFC 3339 and counts plain numbers.
type Duration time.Duration

// String returns the duration as time.Duration writes it.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes d as a JSON string: "1.5s".
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a JSON string time.ParseDuration takes ("90s",
// "1m30s"); anything else, numbers included, is an error.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("a duration is a string such as 1.5s or 2m")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("not a duration such as 1.5s or 2m")
	}
	*d = Duration(v)
	return nil
}
