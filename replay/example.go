package replay

import (
	"bytes"
	"encoding/json"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
)

// ExampleUser is the user of the worked example.
const ExampleUser = "2533274791234567"

// WorkedExample returns the worked example of the Xbox services
// "Fine-Grained Rate Limiting" page: one user calling a service with burst
// 30 / 15 s and sustain 100 / 300 s, each interval's
// requests spread over its first 10 s. The limits are base with the example
// service ("example", host example.xboxlive.com) added first.
func WorkedExample(base *limits.Limits) (Pattern, *limits.Limits, error) {
	doc := struct {
		Revision string        `json:"revision"`
		Source   string        `json:"source"`
		Fallback *limits.Rule  `json:"fallback,omitempty"`
		Rules    []limits.Rule `json:"rules"`
	}{
		Revision: base.Revision + "+example", Source: "Xbox services Fine-Grained Rate Limiting documentation, worked example", Fallback: base.Fallback,
		Rules: append([]limits.Rule{{Service: "example", Hosts: []string{"example.xboxlive.com"}, Burst: 30, Sustain: 100}}, base.Rules...),
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, err
	}
	l, err := limits.Read(bytes.NewReader(b))
	if err != nil {
		return nil, nil, err
	}
	var p Pattern
	for _, iv := range []struct{ at, n int }{{0, 35}, {15, 28}, {30, 21}, {45, 36}, {60, 24}, {285, 4}} {
		p = append(p, Event{At: seconds(float64(iv.at)), Service: "example", User: ExampleUser, Count: iv.n, Spread: seconds(10)})
	}
	return p, l, nil
}

// answerAll answers every call the mock counts 200 with an empty object
// (Options.AnswerAll).
var answerAll = mock.Script{Rules: []mock.ScriptRule{{Name: "every call",
	Count: true, Answers: []mock.ScriptAnswer{{Status: 200, Body: json.RawMessage(`{}`)}}}}}

// exampleScript serves the worked example's host: the mock has no routes
// for it, so a counted script answers each call it admits 200 with an
// empty object (and FGRL refuses the rest with 429, as for any service).
var exampleScript = mock.Script{Rules: []mock.ScriptRule{{Name: "example service",
	Match: mock.ScriptMatch{Host: "example.xboxlive.com"}, Count: true,
	Answers: []mock.ScriptAnswer{{Status: 200, Body: json.RawMessage(`{}`)}}}}}
