package console

import (
	"log/slog"
	"net/http"
)

// cancelRun cancels a live run (POST id, csrf).
func (c *Console) cancelRun(w http.ResponseWriter, r *http.Request, v *visitor) {
	id := r.PostFormValue("id")
	ok := c.src.Desk.Cancel(id, v.Principal)
	c.logger.Info("console: run cancelled", slog.String("principal", v.Principal), slog.String("run", id), slog.Bool("found", ok))
	http.Redirect(w, r, "/console/runs", http.StatusSeeOther)
}

// answerApproval approves or denies a pending approval (POST id,
// decision=approve|deny, csrf); the program waiting for it resumes.
func (c *Console) answerApproval(w http.ResponseWriter, r *http.Request, v *visitor) {
	id, decision := r.PostFormValue("id"), r.PostFormValue("decision")
	if decision != "approve" && decision != "deny" {
		http.Error(w, "decision must be approve or deny", http.StatusBadRequest)
		return
	}
	ok := c.src.Desk.Answer(id, decision == "approve", v.Principal)
	c.logger.Info("console: approval answered", slog.String("principal", v.Principal), slog.String("approval", id),
		slog.String("decision", decision), slog.Bool("found", ok))
	http.Redirect(w, r, "/console/approvals", http.StatusSeeOther)
}
