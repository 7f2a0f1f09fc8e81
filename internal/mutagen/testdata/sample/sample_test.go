package sample

import (
	"fmt"
	"testing"
	"time"
)

func TestSample(t *testing.T) {
	m := map[string]int{}
	Count(m, "k")
	Count(m, "k")
	tests := []struct {
		name      string
		got, want any
	}{
		{"less", Less(1, 2), true},
		{"less, equal", Less(2, 2), false},
		{"sum", Sum([]int{1, 2, 3}), 6},
		{"count", m["k"], 2},
		{"neg", Neg(3), -3},
		{"window", Window(), int64(2 * time.Second)},
		{"half", Half(time.Second), time.Second / 2},
		{"odd", Odd(3), true},
		{"even", Odd(4), false},
		{"positive", Positive(1), flag(true)},
		{"max", Max(1, 2), 2},
		{"max, first", Max(2, 1), 2},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func ExampleGreet() {
	fmt.Println(Greet("you"))
	// Output: hello, you
}
