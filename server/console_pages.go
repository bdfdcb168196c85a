package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// mountConsolePages serves the console's page, console.html of the built front end (web/dist),
// at /console/ and every path under it but the API: the page routes itself, so a reload or a
// shared link opens the same view. Its scripts and styles are the front end's shared assets
// under /ui/assets/.
func (s *Server) mountConsolePages(e *echo.Echo) {
	e.GET(ConsolePath, func(c echo.Context) error { return c.Redirect(http.StatusFound, ConsolePath+"/") }, consoleHeaders)
	page := func(c echo.Context) error { return s.components.file(c, "console.html") }
	e.GET(ConsolePath+"/", page, consoleHeaders)
	e.GET(ConsolePath+"/*", page, consoleHeaders)
}
