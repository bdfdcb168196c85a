package server

import (
	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/service"
)

// mountConsolePages serves the console's pages. They are not built yet: the front-end project
// that will hold them does not exist in this tree, so the console answers 501 not_implemented.
func (s *Server) mountConsolePages(e *echo.Echo) {
	e.GET(ConsolePath, s.consolePagesMissing, consoleHeaders)
	e.GET(ConsolePath+"/*", s.consolePagesMissing, consoleHeaders)
}

func (s *Server) consolePagesMissing(echo.Context) error {
	return &service.Error{Type: service.TypeNotImplemented, Message: "The console's pages are not built in this release; its API is under /console/api."}
}
