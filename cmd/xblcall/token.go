package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/xblgo/fgrl/internal/xblid"
	"github.com/xblgo/fgrl/mock"
)

func tokenCommand(e *env) *cobra.Command {
	o := new(tokenOpts)
	c := &cobra.Command{
		Use:   "token",
		Short: "print an Authorization value the mock accepts",
		Example: `  xblcall token --xuid 2533274791234567 --title 1234567890
  curl -H "Authorization: $(xblcall token --xuid 1 --title 2)" ...
  xblcall token --xuid 1 --title 2 --json | jq -r .userhash
`,
		RunE: runE(e, o.run),
	}
	c.Flags().AddFlagSet(tokenFlags(o))
	return c
}

type tokenOpts struct {
	xuid, title string
	json        bool
}

func tokenFlags(o *tokenOpts) *flag.FlagSet {
	fs := newFlagSet("token")
	fs.StringVar(&o.xuid, "xuid", "", "the user's xuid (required)")
	fs.StringVar(&o.title, "title", "", "the title ID (required)")
	fs.BoolVar(&o.json, "json", false, "print the value with its userhash, XUID and title as JSON")
	return fs
}

func (o *tokenOpts) run(_ context.Context, e *env, args []string) error {
	if o.xuid == "" || o.title == "" || len(args) > 0 {
		return &exitError{2, errors.New("need --xuid and --title, and no arguments")}
	}
	if err := checkIDs(o.xuid, o.title); err != nil {
		return err
	}
	tok := mock.Token(o.xuid, o.title)
	if o.json {
		return json.NewEncoder(e.stdout).Encode(struct {
			Authorization string `json:"authorization"`
			Userhash      string `json:"userhash"`
			XUID          string `json:"xuid"`
			Title         string `json:"title"`
		}{tok, mock.UserHash(o.xuid), o.xuid, o.title})
	}
	fmt.Fprintln(e.stdout, tok)
	return nil
}

// checkIDs refuses a XUID or title ID the services would not accept, as a
// usage error naming the flag.
func checkIDs(xuid, title string) error {
	if err := xblid.CheckXUID(xuid); err != nil {
		return &exitError{2, fmt.Errorf("--xuid: %w", err)}
	}
	if err := xblid.CheckTitle(title); err != nil {
		return &exitError{2, fmt.Errorf("--title: %w", err)}
	}
	return nil
}
