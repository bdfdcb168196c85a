package service

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboard/switchboard/store"
)

// Ways an operator reaches the operator operations, recorded in the audit log.
const (
	// ViaConsole is the web console, with the browser's address and user agent.
	ViaConsole = "console"
	// ViaCLI is the switchboard command line on the installation's machine.
	ViaCLI = "cli"
)

// Actor is who makes an operator change, for the audit log: a console user (UserID, Email), or
// the command line (UserID empty), and from where.
type Actor struct {
	// UserID is the console user's id (opr_…); empty for the command line.
	UserID string
	// Email is the console user's email, or a description of the command line's user.
	Email string
	// Via is ViaConsole or ViaCLI.
	Via string
	// IP and UserAgent are the browser's; empty for the command line.
	IP        string
	UserAgent string
}

// CLIActor is the command line's actor; who names the operating-system user and host.
func CLIActor(who string) Actor {
	return Actor{Email: "command line (" + who + ")", Via: ViaCLI}
}

// auditLog writes audit entries at its clock's time.
type auditLog struct{ now func() time.Time }

// record writes, in tx, that actor did action on target in project projectID ("" for a change
// to the actor's own console user); detail must hold no secret.
func (l auditLog) record(ctx context.Context, tx *store.Store, a Actor, projectID, action, target string, detail map[string]any) error {
	d := "{}"
	if len(detail) > 0 {
		b, err := json.Marshal(detail)
		if err != nil {
			return fmt.Errorf("service: audit detail: %w", err)
		}
		d = string(b)
	}
	via := a.Via
	if via == "" {
		via = ViaConsole
	}
	return tx.InsertAudit(ctx, &store.AuditEntry{ProjectID: projectID, ActorID: a.UserID, ActorEmail: a.Email, Action: action,
		Target: target, Detail: d, Via: via, IP: a.IP, UserAgent: a.UserAgent, CreatedAt: l.now().UTC().Truncate(time.Microsecond)})
}
