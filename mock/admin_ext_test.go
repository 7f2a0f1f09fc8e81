package mock_test

import (
	"net/http"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
)

func init() {
	mock.WithAdmin = func(h *mock.Handler) http.Handler { return admin.WithServices(h, admin.Config{}) }
}
