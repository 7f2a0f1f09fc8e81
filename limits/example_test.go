package limits_test

import (
	"fmt"

	"github.com/xblgo/fgrl/limits"
)

func ExampleLimits_Match() {
	l := limits.Default()
	for _, req := range [][3]string{
		{"POST", "userpresence.xboxlive.com", "/users/xuid(2533274791234567)/devices/current/titles/current"},
		{"GET", "userpresence.xboxlive.com", "/users/xuid(2533274791234567)"},
		{"POST", "sessiondirectory.xboxlive.com", "/handles/query"},
	} {
		r, _ := l.Match(req[0], req[1], req[2])
		fmt.Println(r.Scope(), r.Burst, r.Sustain)
	}
	// Output:
	// presence/write 3 30
	// presence/read 30 100
	// mpsd-search-handle/read 1 20
}
