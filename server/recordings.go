package server

import (
	"bytes"
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

func recordingOut(v *store.RecordingView) gen.Recording {
	return gen.Recording{Id: v.ID, Duration: v.Duration, Call: callOut(&v.Call), Status: gen.RecordingStatusCompleted,
		CreatedAt: v.CreatedAt.UTC()}
}

// GetRecording returns one recording (its audio is at GetRecordingFile).
func (s *Server) GetRecording(ctx context.Context, req gen.GetRecordingRequestObject) (gen.GetRecordingResponseObject, error) {
	v, err := s.store.GetRecording(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.GetRecording200JSONResponse(recordingOut(v)), nil
}

// ListRecordings lists an account's recordings, newest first.
func (s *Server) ListRecordings(ctx context.Context, req gen.ListRecordingsRequestObject) (gen.ListRecordingsResponseObject, error) {
	p := req.Params
	rows, cur, err := s.store.ListRecordings(ctx, principal(ctx).ProjectID, req.AccountId, page(p.After, p.Before, p.Limit))
	if err != nil {
		return nil, err
	}
	return gen.ListRecordings200JSONResponse{Data: mapSlice(rows, recordingOut), Pagination: pagination(cur)}, nil
}

// DeleteRecording deletes a recording with its audio (and the voicemail it is) and returns it.
func (s *Server) DeleteRecording(ctx context.Context, req gen.DeleteRecordingRequestObject) (gen.DeleteRecordingResponseObject, error) {
	v, err := s.store.DeleteRecording(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.DeleteRecording200JSONResponse(recordingOut(v)), nil
}

// GetRecordingFile redirects to a short-lived signed URL of the recording's audio.
func (s *Server) GetRecordingFile(ctx context.Context, req gen.GetRecordingFileRequestObject) (gen.GetRecordingFileResponseObject, error) {
	loc, err := s.voice.RecordingLocation(ctx, principal(ctx).ProjectID, req.RecordingId)
	if err != nil {
		return nil, err
	}
	return gen.GetRecordingFile302Response{Headers: gen.GetRecordingFile302ResponseHeaders{Location: loc}}, nil
}

// serveRecording is the public route behind signed recording URLs (GET
// /files/recordings/{token}), outside the contract: whoever holds an unexpired URL gets the audio
// without an API key. http.ServeContent answers Range requests (206) and conditional ones.
func (s *Server) serveRecording(c echo.Context) error {
	r, err := s.voice.OpenRecording(c.Request().Context(), c.Param("token"))
	if err != nil {
		return err
	}
	name := r.ID
	if r.ContentType == "audio/wav" || r.ContentType == "audio/wave" || r.ContentType == "audio/x-wav" {
		name += ".wav"
	}
	h := c.Response().Header()
	h.Set("Content-Type", r.ContentType)
	h.Set("Cache-Control", "private, max-age=300")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Disposition", `inline; filename="`+name+`"`)
	w := &unsatisfiable{ResponseWriter: c.Response()}
	http.ServeContent(w, c.Request(), name, r.CreatedAt, bytes.NewReader(r.Data))
	if w.refused {
		return service.Errorf("range_not_satisfiable", "the Range header asks for no byte of the %d the file has", len(r.Data))
	}
	return nil
}

// unsatisfiable stands in for the response while http.ServeContent serves a file: it lets a 416
// (a Range outside the file) through as an error in the envelope instead of ServeContent's text.
type unsatisfiable struct {
	http.ResponseWriter
	refused bool
}

func (u *unsatisfiable) WriteHeader(status int) {
	if status == http.StatusRequestedRangeNotSatisfiable {
		u.refused = true
		return
	}
	u.ResponseWriter.WriteHeader(status)
}

func (u *unsatisfiable) Write(b []byte) (int, error) {
	if u.refused {
		return len(b), nil
	}
	return u.ResponseWriter.Write(b)
}
