package mock

import (
	"encoding/json"
	"net/http"
	"slices"
)

// The reputation service, contract 101 (XSAPI reputation_service.cpp,
// reputation_feedback_request.cpp; ReputationTests.cpp):
// POST /users/xuid(N)/feedback with {"sessionRef": null or a reference,
// "feedbackType", "textReason", "evidenceId": null or a string} answers 202
// with no body.

// feedbackTypes are the feedback types XSAPI sends.
var feedbackTypes = []string{
	"FairPlayKillsTeammates", "FairPlayCheater", "FairPlayTampering", "FairPlayQuitter", "FairPlayKicked",
	"CommsInappropriateVideo", "CommsAbusiveVoice", "UserContentInappropriateUGC", "PositiveSkilledPlayer",
	"PositiveHelpfulPlayer", "PositiveHighQualityUGC", "CommsPhishing", "CommsPictureMessage", "CommsSpam",
	"CommsTextMessage", "CommsVoiceMessage", "FairPlayConsoleBanRequest", "FairPlayIdler",
	"FairPlayUserBanRequest", "UserContentGamertag", "UserContentPersonalInfo", "FairplayUnsporting",
	"FairplayLeaderboardCheater",
}

// maxFeedbackText bounds textReason.
const maxFeedbackText = 4096

// reputationService answers the reputation service.
type reputationService struct{ *world }

func (s reputationService) routes() []route {
	return []route{{http.MethodPost, pat("/users/xuid({n})/feedback"), s.serveFeedback, "101"}}
}

func (s reputationService) serveFeedback(c *call) {
	var req struct {
		SessionRef   json.RawMessage `json:"sessionRef"`
		FeedbackType string          `json:"feedbackType"`
		TextReason   *string         `json:"textReason"`
		EvidenceID   *string         `json:"evidenceId"`
	}
	if !c.decode(&req) {
		return
	}
	var ref *sessionRef
	switch {
	case !slices.Contains(feedbackTypes, req.FeedbackType):
		writeError(c.w, http.StatusBadRequest, "BadRequest", "unknown feedbackType")
	case req.TextReason == nil || len(*req.TextReason) > maxFeedbackText:
		writeError(c.w, http.StatusBadRequest, "BadRequest", "textReason must be a string of at most 4096 bytes")
	case len(req.SessionRef) == 0 || json.Unmarshal(req.SessionRef, &ref) != nil || (ref != nil && !ref.valid()):
		writeError(c.w, http.StatusBadRequest, "BadRequest", "sessionRef must be null or a session reference")
	case c.params[0] == c.id.xuid:
		writeError(c.w, http.StatusBadRequest, "BadRequest", "a user may not report themselves")
	default:
		c.w.WriteHeader(http.StatusAccepted)
	}
}
