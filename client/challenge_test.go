package client

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/internal/wiretest"
)

// xsapiChallenge is the achievements service's answer as
// microsoft/xbox-live-api Tests/UnitTests/Tests/Services/AchievementsTests.cpp
// gives it: an achievement whose time window, deep link and in-app reward
// carry values.
const xsapiChallenge = `caller: 2669321029139235
title: 219630713
GET /users/xuid(2669321029139235)/achievements/1370999b-fca2-4c53-8ec5-73493bcb67e5/3
x-xbl-contract-version: 2
-- request --
-- response 200 --
{"achievements": [{"id": "3", "serviceConfigId": "1370999b-fca2-4c53-8ec5-73493bcb67e5",
  "name": "Default NameString for Microsoft Achievements Sample Achievement 3",
  "titleAssociations": [{"name": "Microsoft Achievements Sample", "id": 3051199919, "version": "abc"}],
  "progressState": "Achieved",
  "progression": {"requirements": [
    {"id": "12345678-1234-1234-1234-123456789111", "current": null, "target": "100", "operationType": "sum", "ruleParticipationType": "Individual"},
    {"id": "12345678-1234-1234-1234-123456789222", "current": null, "target": "100", "operationType": "sum", "ruleParticipationType": "Group"}],
    "timeUnlocked": "2013-01-17T03:19:00.3087016Z"},
  "mediaAssets": [{"name": "Icon Name", "type": "Icon", "url": "http://www.xbox.com/"}],
  "platforms": ["Durango", "Xbox360"], "isSecret": true,
  "description": "Default DescriptionString for Microsoft Achievements Sample Achievement 3",
  "lockedDescription": "Default UnachievedString for Microsoft Achievements Sample Achievement 3",
  "productId": "12345678-1234-1234-1234-123456789012", "achievementType": "Challenge", "participationType": "Individual",
  "timeWindow": {"startDate": "2013-02-01T00:00:00Z", "endDate": "2100-07-01T00:00:00Z"},
  "rewards": [
    {"name": null, "description": null, "value": "10", "type": "Gamerscore", "valueType": "Int", "mediaAsset": null},
    {"name": "Default Name for InAppReward for Microsoft Achievements Sample Achievement 3",
     "description": "Default Description for InAppReward for Microsoft Achievements Sample Achievement 3",
     "value": "1", "type": "InApp", "valueType": "String", "mediaAsset": {"name": "Icon Name", "type": "Icon", "url": "http://www.xbox.com"}}],
  "estimatedTime": "06:12:14", "deeplink": "aWFtYWRlZXBsaW5r", "isRevoked": false}],
 "pagingInfo": {"continuationToken": null, "totalRecords": 1}}
`

// TestAchievementChallengeDecodes: a challenge's time window, deep link
// and in-app reward decode as XSAPI reads them.
func TestAchievementChallengeDecodes(t *testing.T) {
	x, err := wiretest.Parse([]byte(xsapiChallenge))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := New(Config{TitleID: x.Title, Tokens: StaticTokens{x.Caller: "XBL3.0 x=1;t"}, Transport: &replay{x: x}})
	a, err := c.As(x.Caller).GetAchievement(context.Background(), x.Caller, "1370999b-fca2-4c53-8ec5-73493bcb67e5", "3")
	if err != nil {
		t.Fatal(err)
	}
	got := []any{a.AchievementType, a.TimeWindow, a.Deeplink, a.Rewards}
	want := []any{"Challenge", &TimeWindow{"2013-02-01T00:00:00Z", "2100-07-01T00:00:00Z"}, "aWFtYWRlZXBsaW5r", []Reward{
		{Value: "10", Type: "Gamerscore"},
		{Value: "1", Type: "InApp", Name: "Default Name for InAppReward for Microsoft Achievements Sample Achievement 3",
			Description: "Default Description for InAppReward for Microsoft Achievements Sample Achievement 3",
			MediaAsset:  &MediaAsset{"Icon Name", "Icon", "http://www.xbox.com"}}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}
