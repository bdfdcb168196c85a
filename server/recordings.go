package server

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/gen"
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
// without an API key.
func (s *Server) serveRecording(c echo.Context) error {
	r, err := s.voice.OpenRecording(c.Request().Context(), c.Param("token"))
	if err != nil {
		return err
	}
	name := r.ID
	if r.ContentType == "audio/wav" || r.ContentType == "audio/wave" || r.ContentType == "audio/x-wav" {
		name += ".wav"
	}
	return serveStored(c, storedFile{Name: name, ContentType: r.ContentType, Modified: r.CreatedAt, Data: r.Data})
}
