package discord

import (
	"context"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// argOption is the name of the one option of slash commands that take
// arguments: the rest of the typed command line.
const argOption = "text"

// slashCommand is a slash command registered with Discord; its typed form
// is "/name" followed by the option's text.
type slashCommand struct {
	name, description string
	// arg describes the option, "" for a command without arguments.
	arg string
}

// slashCommands are the instincts offered as slash commands.
func slashCommands() []slashCommand {
	return []slashCommand{
		{"status", "Mode, workspace and the running task", ""},
		{"stop", "Stop the running task now", ""},
		{"help", "What Fetch understands", ""},
		{"clear", "Start a fresh conversation history (keeps the workspace)", ""},
		{"remind", "A one-time reminder", "when and what: in 20m check the deploy, at 18:30 call Bob"},
		{"schedule", "A recurring job", `cron spec and what: "0 9 * * 1-5" summarize open PRs`},
		{"cron", "Your reminders and schedules", "list, remove ID, pause ID or resume ID"},
		{"autonomy", "Show or set how much Fetch may do without asking (owner only)", "supervised, cautious or autonomous"},
		{"use", "Work in a workspace from now on (alone: list them)", "the workspace's name"},
		{"plan", "The coding CLI plans first, read-only; you approve, revise or cancel", "the goal"},
		{"policy", "What the coding CLI may do without asking, and the remembered rules", "remove ID to drop a rule (owner only)"},
	}
}

// registerCommands replaces the application's global commands with
// Fetch's, usable in DMs with the bot.
func (b *Bot) registerCommands(ctx context.Context) error {
	b.mu.Lock()
	app := b.appID
	b.mu.Unlock()
	if app == "" {
		return fmt.Errorf("discord: register commands: READY carried no application id")
	}
	dm := true
	contexts := []discordgo.InteractionContextType{discordgo.InteractionContextBotDM}
	var cmds []*discordgo.ApplicationCommand
	for _, c := range slashCommands() {
		ac := &discordgo.ApplicationCommand{
			Name: c.name, Description: c.description, Type: discordgo.ChatApplicationCommand,
			DMPermission: &dm, Contexts: &contexts,
		}
		if c.arg != "" {
			ac.Options = []*discordgo.ApplicationCommandOption{{
				Type: discordgo.ApplicationCommandOptionString, Name: argOption, Description: c.arg,
			}}
		}
		cmds = append(cmds, ac)
	}
	if _, err := b.session.ApplicationCommandBulkOverwrite(app, "", cmds, discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("discord: register commands: %w", err)
	}
	return nil
}

// commandText is the typed form of a slash command.
func commandText(data discordgo.ApplicationCommandInteractionData) string {
	text := "/" + data.Name
	for _, o := range data.Options {
		if o.Type == discordgo.ApplicationCommandOptionString {
			if v := strings.TrimSpace(o.StringValue()); v != "" {
				text += " " + v
			}
		}
	}
	return text
}

// onCommand acknowledges a slash command by showing its typed form, then
// hands that text on: from there it is exactly the typed command.
func (b *Bot) onCommand(ctx context.Context, in *discordgo.Interaction) {
	text := commandText(in.ApplicationCommandData())
	if !b.respond(ctx, in, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: "`" + strings.ReplaceAll(truncate(text, MaxContent-2), "`", "'") + "`", AllowedMentions: &discordgo.MessageAllowedMentions{}},
	}) {
		return
	}
	b.receive(in.ChannelID, in.User.ID, in.ID, text, b.now())
}
