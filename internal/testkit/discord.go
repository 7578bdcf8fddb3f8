package testkit

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
)

// Discord is a fake Discord for tests that drive the real discordgo
// client: the REST API v9 endpoints a bot uses and a gateway websocket,
// speaking Discord's wire protocol (JSON shapes, opcodes, error codes) on
// 127.0.0.1. Tests act as Discord users through it (DMs, button clicks,
// slash commands) and read what the bot did (messages with their edit
// history, attachments and buttons, typing, interaction callbacks).
//
// It enforces what real Discord enforces and bots get wrong: the
// "Bot <token>" authorization, 2,000 characters per message, at most 5
// buttons per row and 5 rows, custom ids of at most 100 characters, the
// 3-second window to acknowledge an interaction (once), follow-ups only
// after the acknowledgement, and enforce_nonce de-duplication. Faults are
// injected on request: dropped gateway connections, RECONNECT requests,
// failed or half-done message creates, per-channel rate limits.
//
// All methods are safe for concurrent use.
type Discord struct {
	// Token is the bot token the fake accepts.
	Token string
	// BotID is the bot user's id; AppID its application's.
	BotID, AppID string

	t        testing.TB
	srv      *httptest.Server
	upgrader websocket.Upgrader
	// heartbeat is the interval the gateway asks for.
	heartbeat time.Duration

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	nextID  int64
	// channels are DM channels by id; dms maps a user id to theirs.
	channels map[string]*DiscordChannel
	dms      map[string]string
	messages []*DiscordMessage
	typing   map[string]int
	commands []DiscordCommand
	inter    map[string]*DiscordInteraction
	requests int
	download int
	// files are the contents of posted attachments (DiscordPost.Files), by name.
	files    map[string][]byte
	failures []DiscordFailure
	limit    channelLimit
	limited  int
	// nonceWindow is how long enforce_nonce remembers a nonce.
	nonceWindow time.Duration

	gw gateway
}

// DiscordChannel is a DM channel between the bot and one user.
type DiscordChannel struct {
	ID     string
	UserID string
}

// DiscordMessage is a message in a channel, as the fake keeps it.
type DiscordMessage struct {
	ID        string
	ChannelID string
	GuildID   string
	AuthorID  string
	Bot       bool
	Content   string
	Nonce     string
	// Components are the message's action rows, as JSON.
	Components []DiscordRow
	Files      []DiscordFile
	// Edits are the contents the message had before each edit, oldest
	// first; len(Edits) is the number of edits.
	Edits     []string
	CreatedAt time.Time
	// Interaction is the interaction whose response this message is.
	Interaction string
}

// DiscordRow is an action row.
type DiscordRow struct {
	Type       int             `json:"type"`
	Components []DiscordButton `json:"components"`
}

// DiscordButton is a button component.
type DiscordButton struct {
	Type     int    `json:"type"`
	Style    int    `json:"style"`
	Label    string `json:"label"`
	CustomID string `json:"custom_id"`
	// URL is a link button's target (style 5, no custom_id).
	URL      string `json:"url,omitempty"`
	Disabled bool   `json:"disabled,omitempty"`
}

// DiscordFile is an attachment: one the bot sent, or one posted with a
// user's message (DiscordPost.Files).
type DiscordFile struct {
	Name string
	// ContentType is the type its part was sent with: what Discord takes
	// to show a picture inline.
	ContentType string
	Data        []byte
}

// DiscordCommand is a registered application command.
type DiscordCommand struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Options     json.RawMessage `json:"options,omitempty"`
	Contexts    []int           `json:"contexts,omitempty"`
}

// DiscordInteraction is an interaction the fake dispatched and what the
// bot answered.
type DiscordInteraction struct {
	ID, Token string
	ChannelID string
	UserID    string
	// MessageID is the message whose button was clicked.
	MessageID  string
	Dispatched time.Time
	// Acked is when the callback came, zero if it did not; AckType is the
	// callback type (4 message, 5 deferred message, 6 deferred update, 7
	// update message).
	Acked   time.Time
	AckType int
	// AckContent is the content of a type 4 or 7 callback.
	AckContent string
	// Rejected counts callbacks refused (late, repeated).
	Rejected int
}

// DiscordFailure is a fault injected into the next message create.
type DiscordFailure string

const (
	// FailNone lets the message through (to aim a later fault).
	FailNone DiscordFailure = ""
	// FailReject answers 500 without creating the message.
	FailReject DiscordFailure = "reject"
	// FailAfterCreate creates the message, then cuts the connection before
	// answering: the bot cannot know it was sent.
	FailAfterCreate DiscordFailure = "after-create"
)

type channelLimit struct {
	n    int
	per  time.Duration
	hits map[string][]time.Time
}

// interactionWindow is how long Discord waits for an interaction's
// acknowledgement.
const interactionWindow = 3 * time.Second

// maxContent is Discord's limit on a message's content, in characters.
const maxContent = 2000

// NewDiscord starts a fake Discord on 127.0.0.1 for a bot with token; it
// stops when the test ends.
func NewDiscord(t testing.TB, token string) *Discord {
	t.Helper()
	d := &Discord{
		Token:       token,
		BotID:       "900000000000000001",
		AppID:       "900000000000000002",
		t:           t,
		heartbeat:   2 * time.Second,
		changed:     make(chan struct{}),
		nextID:      1000000000000000000,
		channels:    map[string]*DiscordChannel{},
		dms:         map[string]string{},
		typing:      map[string]int{},
		inter:       map[string]*DiscordInteraction{},
		nonceWindow: 5 * time.Minute,
	}
	d.gw.sessions = map[string]*gwSession{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /gateway/{$}", d.serveGateway)
	mux.HandleFunc("GET /attachments/{name}", d.serveAttachment)
	api := http.NewServeMux()
	api.HandleFunc("GET /api/v9/gateway", d.getGateway)
	api.HandleFunc("GET /api/v9/gateway/bot", d.getGateway)
	api.HandleFunc("GET /api/v9/users/@me", d.getMe)
	api.HandleFunc("POST /api/v9/users/@me/channels", d.createDM)
	api.HandleFunc("POST /api/v9/channels/{channel}/messages", d.createMessage)
	api.HandleFunc("PATCH /api/v9/channels/{channel}/messages/{message}", d.editMessage)
	api.HandleFunc("POST /api/v9/channels/{channel}/typing", d.postTyping)
	api.HandleFunc("PUT /api/v9/applications/{app}/commands", d.putCommands)
	api.HandleFunc("GET /api/v9/applications/{app}/commands", d.getCommands)
	api.HandleFunc("POST /api/v9/interactions/{id}/{token}/callback", d.interactionCallback)
	api.HandleFunc("POST /api/v9/webhooks/{app}/{token}", d.followUp)
	mux.Handle("/api/", d.authorized(api))
	d.srv = httptest.NewServer(mux)
	t.Cleanup(d.Close)
	return d
}

// URL is the fake's base URL, what FETCH_DISCORD_URL is set to.
func (d *Discord) URL() string { return d.srv.URL }

// Close stops the fake, closing the gateway connection.
func (d *Discord) Close() {
	d.mu.Lock()
	if c := d.gw.conn; c != nil {
		c.ws.Close()
	}
	d.mu.Unlock()
	d.srv.CloseClientConnections()
	d.srv.Close()
}

// SetChannelLimit makes message creates and edits in a channel answer 429
// beyond n per period, like Discord's per-channel limit; n = 0 turns it
// off.
func (d *Discord) SetChannelLimit(n int, per time.Duration) {
	d.mu.Lock()
	d.limit = channelLimit{n: n, per: per, hits: map[string][]time.Time{}}
	d.mu.Unlock()
}

// RateLimited is the number of requests answered 429.
func (d *Discord) RateLimited() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.limited
}

// FailNextMessages injects f into the next n message creates.
func (d *Discord) FailNextMessages(n int, f DiscordFailure) {
	d.mu.Lock()
	for range n {
		d.failures = append(d.failures, f)
	}
	d.mu.Unlock()
}

// Requests is the number of authorized REST requests served so far.
func (d *Discord) Requests() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.requests
}

// Downloads is the number of attachment downloads served so far.
func (d *Discord) Downloads() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.download
}

// DMChannel returns the id of the DM channel between the bot and userID,
// creating it first if needed.
func (d *Discord) DMChannel(userID string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dmLocked(userID).ID
}

func (d *Discord) dmLocked(userID string) *DiscordChannel {
	if id, ok := d.dms[userID]; ok {
		return d.channels[id]
	}
	c := &DiscordChannel{ID: d.idLocked(), UserID: userID}
	d.channels[c.ID] = c
	d.dms[userID] = c.ID
	return c
}

func (d *Discord) idLocked() string {
	d.nextID++
	return strconv.FormatInt(d.nextID, 10)
}

// notifyLocked wakes everyone waiting in WaitFor.
func (d *Discord) notifyLocked() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// Changed returns a channel closed at the fake's next change of state
// (a request served, an event dispatched, a heartbeat).
func (d *Discord) Changed() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.changed
}

// WaitFor waits until cond (called with the fake's state unlocked) holds,
// failing the test after a generous deadline.
func (d *Discord) WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		d.mu.Lock()
		changed := d.changed
		d.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("waited 30s for %s", what)
			return
		}
	}
}

// Messages returns copies of the messages in a channel that the bot
// sent, oldest first.
func (d *Discord) Messages(channelID string) []DiscordMessage {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []DiscordMessage
	for _, m := range d.messages {
		if m.ChannelID == channelID && m.AuthorID == d.BotID {
			c := *m
			c.Edits = append([]string(nil), m.Edits...)
			c.Components = append([]DiscordRow(nil), m.Components...)
			c.Files = append([]DiscordFile(nil), m.Files...)
			out = append(out, c)
		}
	}
	return out
}

// WaitMessages waits until the bot sent at least n messages to the
// channel and returns them.
func (d *Discord) WaitMessages(t testing.TB, channelID string, n int) []DiscordMessage {
	t.Helper()
	d.WaitFor(t, fmt.Sprintf("%d bot messages in %s", n, channelID), func() bool { return len(d.Messages(channelID)) >= n })
	return d.Messages(channelID)
}

// Typing is the number of typing indicators the bot triggered in a
// channel.
func (d *Discord) Typing(channelID string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.typing[channelID]
}

// Commands returns the registered application commands.
func (d *Discord) Commands() []DiscordCommand {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]DiscordCommand(nil), d.commands...)
}

// Interaction returns what became of an interaction.
func (d *Discord) Interaction(id string) DiscordInteraction {
	d.mu.Lock()
	defer d.mu.Unlock()
	if in := d.inter[id]; in != nil {
		return *in
	}
	return DiscordInteraction{}
}

// authorized checks the bot token and counts requests.
func (d *Discord) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/v9/interactions/") && !strings.HasPrefix(r.URL.Path, "/api/v9/webhooks/") &&
			r.Header.Get("Authorization") != "Bot "+d.Token {
			apiError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
			return
		}
		d.mu.Lock()
		d.requests++
		d.notifyLocked()
		d.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func apiError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (d *Discord) getGateway(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"url":    "ws" + strings.TrimPrefix(d.srv.URL, "http") + "/gateway/",
		"shards": 1,
		"session_start_limit": map[string]int{
			"total": 1000, "remaining": 999, "reset_after": 86400000, "max_concurrency": 1,
		},
	})
}

func (d *Discord) userJSON(id string, bot bool) map[string]any {
	name := "user" + id[max(0, len(id)-4):]
	if id == d.BotID {
		name = "fetch"
	}
	return map[string]any{"id": id, "username": name, "discriminator": "0", "global_name": name, "bot": bot}
}

func (d *Discord) getMe(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, d.userJSON(d.BotID, true))
}

func (d *Discord) createDM(w http.ResponseWriter, r *http.Request) {
	var body struct {
		RecipientID string `json:"recipient_id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.RecipientID == "" {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	d.mu.Lock()
	c := d.dmLocked(body.RecipientID)
	d.notifyLocked()
	d.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"id": c.ID, "type": 1, "recipients": []any{d.userJSON(c.UserID, false)}})
}

func (d *Discord) postTyping(w http.ResponseWriter, r *http.Request) {
	ch := r.PathValue("channel")
	d.mu.Lock()
	_, ok := d.channels[ch]
	if ok {
		d.typing[ch]++
		d.notifyLocked()
	}
	d.mu.Unlock()
	if !ok {
		apiError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (d *Discord) serveAttachment(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	d.download++
	d.notifyLocked()
	data, ok := d.files[r.PathValue("name")]
	d.mu.Unlock()
	if ok {
		w.Write(data)
		return
	}
	io.WriteString(w, "attachment "+r.PathValue("name"))
}

// messagePayload is the JSON body of a message create or edit.
type messagePayload struct {
	Content      *string         `json:"content"`
	Components   *[]DiscordRow   `json:"components"`
	Nonce        json.RawMessage `json:"nonce"`
	EnforceNonce bool            `json:"enforce_nonce"`
	Attachments  *[]struct {
		ID string `json:"id"`
	} `json:"attachments"`
}

// readPayload reads a JSON or multipart (payload_json + files[n]) body.
func readPayload(r *http.Request) (messagePayload, []DiscordFile, error) {
	var p messagePayload
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		err := json.NewDecoder(r.Body).Decode(&p)
		return p, nil, err
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	var files []DiscordFile
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return p, nil, err
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return p, nil, err
		}
		switch name := part.FormName(); {
		case name == "payload_json":
			if err := json.Unmarshal(data, &p); err != nil {
				return p, nil, err
			}
		case strings.HasPrefix(name, "files["):
			files = append(files, DiscordFile{Name: part.FileName(), ContentType: part.Header.Get("Content-Type"), Data: data})
		}
	}
	return p, files, nil
}

// maxUpload is the most bytes of attachments Discord takes in one message
// (its limit without a boost).
const maxUpload = 10 << 20

// tooLarge reports whether files are over Discord's upload limit.
func tooLarge(files []DiscordFile) bool {
	n := 0
	for _, f := range files {
		n += len(f.Data)
	}
	return n > maxUpload
}

// validate applies Discord's limits to a message's content and buttons.
func validate(content string, rows []DiscordRow, files []DiscordFile) string {
	if n := utf8.RuneCountInString(content); n > maxContent {
		return fmt.Sprintf("content: Must be %d or fewer in length (got %d)", maxContent, n)
	}
	if len(rows) > 5 {
		return "components: Must be 5 or fewer in length"
	}
	for _, row := range rows {
		if row.Type != 1 || len(row.Components) == 0 || len(row.Components) > 5 {
			return "components: an action row holds 1 to 5 buttons"
		}
		for _, b := range row.Components {
			if b.Type != 2 || b.Label == "" || utf8.RuneCountInString(b.Label) > 80 {
				return "components: invalid button"
			}
			// A link button (style 5) has a URL and no custom_id; the
			// others a custom_id and no URL.
			link := b.Style == 5 && b.URL != "" && b.CustomID == "" && len(b.URL) <= 512
			action := b.Style >= 1 && b.Style <= 4 && b.URL == "" && b.CustomID != "" && len(b.CustomID) <= 100
			if !link && !action {
				return "components: invalid button"
			}
		}
	}
	if len(files) > 10 {
		return "files: Must be 10 or fewer in length"
	}
	return ""
}

// limitedLocked applies the per-channel rate limit, answering 429.
func (d *Discord) limitedLocked(w http.ResponseWriter, ch string) bool {
	if d.limit.n == 0 {
		return false
	}
	now := time.Now()
	var kept []time.Time
	for _, at := range d.limit.hits[ch] {
		if now.Sub(at) < d.limit.per {
			kept = append(kept, at)
		}
	}
	if len(kept) >= d.limit.n {
		d.limit.hits[ch] = kept
		d.limited++
		retry := d.limit.per - now.Sub(kept[0])
		w.Header().Set("Retry-After", strconv.Itoa(int(retry.Seconds()+1)))
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"message": "You are being rate limited.", "retry_after": retry.Seconds(), "global": false})
		return true
	}
	d.limit.hits[ch] = append(kept, now)
	return false
}

func (d *Discord) createMessage(w http.ResponseWriter, r *http.Request) {
	ch := r.PathValue("channel")
	p, files, err := readPayload(r)
	if err != nil {
		apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	content := ""
	if p.Content != nil {
		content = *p.Content
	}
	var rows []DiscordRow
	if p.Components != nil {
		rows = *p.Components
	}
	if tooLarge(files) {
		apiError(w, http.StatusRequestEntityTooLarge, 40005, "Request entity too large")
		return
	}
	if msg := validate(content, rows, files); msg != "" {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: "+msg)
		return
	}
	if content == "" && len(files) == 0 && len(rows) == 0 {
		apiError(w, http.StatusBadRequest, 50006, "Cannot send an empty message")
		return
	}
	var nonce string
	if len(p.Nonce) > 0 {
		if err := json.Unmarshal(p.Nonce, &nonce); err != nil {
			var n int64
			if err := json.Unmarshal(p.Nonce, &n); err != nil {
				apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: nonce")
				return
			}
			nonce = strconv.FormatInt(n, 10)
		}
		if len(nonce) > 25 {
			apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: nonce: Must be 25 or fewer in length")
			return
		}
	}

	d.mu.Lock()
	if _, ok := d.channels[ch]; !ok {
		d.mu.Unlock()
		apiError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	if p.EnforceNonce && nonce != "" {
		for _, m := range d.messages {
			if m.ChannelID == ch && m.AuthorID == d.BotID && m.Nonce == nonce && time.Since(m.CreatedAt) < d.nonceWindow {
				out := d.messageJSONLocked(m)
				d.mu.Unlock()
				writeJSON(w, http.StatusOK, out)
				return
			}
		}
	}
	var failure DiscordFailure
	if len(d.failures) > 0 {
		failure, d.failures = d.failures[0], d.failures[1:]
	}
	if failure == FailReject {
		d.mu.Unlock()
		apiError(w, http.StatusInternalServerError, 0, "500: Internal Server Error")
		return
	}
	if d.limitedLocked(w, ch) {
		d.mu.Unlock()
		return
	}
	m := &DiscordMessage{ID: d.idLocked(), ChannelID: ch, AuthorID: d.BotID, Bot: true, Content: content, Nonce: nonce, Components: rows, Files: files, CreatedAt: time.Now()}
	d.messages = append(d.messages, m)
	out := d.messageJSONLocked(m)
	d.dispatchLocked("MESSAGE_CREATE", out)
	d.notifyLocked()
	d.mu.Unlock()

	if failure == FailAfterCreate {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (d *Discord) editMessage(w http.ResponseWriter, r *http.Request) {
	ch, id := r.PathValue("channel"), r.PathValue("message")
	p, files, err := readPayload(r)
	if err != nil {
		apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	m := d.findLocked(ch, id)
	if m == nil {
		apiError(w, http.StatusNotFound, 10008, "Unknown Message")
		return
	}
	if m.AuthorID != d.BotID {
		apiError(w, http.StatusForbidden, 50005, "Cannot edit a message authored by another user")
		return
	}
	content, rows := m.Content, m.Components
	if p.Content != nil {
		content = *p.Content
	}
	if p.Components != nil {
		rows = *p.Components
	}
	if tooLarge(files) {
		apiError(w, http.StatusRequestEntityTooLarge, 40005, "Request entity too large")
		return
	}
	if msg := validate(content, rows, files); msg != "" {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: "+msg)
		return
	}
	if d.limitedLocked(w, ch) {
		return
	}
	m.Edits = append(m.Edits, m.Content)
	m.Content, m.Components = content, rows
	m.Files = append(m.Files, files...)
	out := d.messageJSONLocked(m)
	d.dispatchLocked("MESSAGE_UPDATE", out)
	d.notifyLocked()
	writeJSON(w, http.StatusOK, out)
}

func (d *Discord) findLocked(ch, id string) *DiscordMessage {
	for _, m := range d.messages {
		if m.ID == id && m.ChannelID == ch {
			return m
		}
	}
	return nil
}

func (d *Discord) messageJSONLocked(m *DiscordMessage) map[string]any {
	atts := []any{}
	for i, f := range m.Files {
		atts = append(atts, map[string]any{"id": fmt.Sprintf("%s%d", m.ID, i), "filename": f.Name, "size": len(f.Data), "url": d.srv.URL + "/attachments/" + f.Name})
	}
	rows := m.Components
	if rows == nil {
		rows = []DiscordRow{}
	}
	out := map[string]any{
		"id": m.ID, "channel_id": m.ChannelID, "type": 0, "content": m.Content,
		"timestamp": m.CreatedAt.UTC().Format(time.RFC3339Nano), "author": d.userJSON(m.AuthorID, m.Bot),
		"attachments": atts, "embeds": []any{}, "mentions": []any{}, "components": rows, "tts": false, "pinned": false,
	}
	if m.GuildID != "" {
		out["guild_id"] = m.GuildID
	}
	if m.Nonce != "" {
		out["nonce"] = m.Nonce
	}
	if len(m.Edits) > 0 {
		out["edited_timestamp"] = time.Now().UTC().Format(time.RFC3339Nano)
	}
	return out
}

func (d *Discord) putCommands(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("app") != d.AppID {
		apiError(w, http.StatusForbidden, 50001, "Missing Access")
		return
	}
	var cmds []DiscordCommand
	if err := json.NewDecoder(r.Body).Decode(&cmds); err != nil {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	d.mu.Lock()
	for i := range cmds {
		if cmds[i].Name == "" || cmds[i].Name != strings.ToLower(cmds[i].Name) || len(cmds[i].Name) > 32 || cmds[i].Description == "" || len(cmds[i].Description) > 100 {
			d.mu.Unlock()
			apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: command "+cmds[i].Name)
			return
		}
		cmds[i].ID = d.idLocked()
	}
	d.commands = cmds
	d.notifyLocked()
	d.mu.Unlock()
	writeJSON(w, http.StatusOK, cmds)
}

func (d *Discord) getCommands(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, d.Commands())
}

func (d *Discord) interactionCallback(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Type int `json:"type"`
		Data *struct {
			Content    *string       `json:"content"`
			Components *[]DiscordRow `json:"components"`
		} `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	in := d.inter[r.PathValue("id")]
	switch {
	case in == nil || in.Token != r.PathValue("token"):
		apiError(w, http.StatusNotFound, 10062, "Unknown interaction")
		return
	case !in.Acked.IsZero():
		in.Rejected++
		apiError(w, http.StatusBadRequest, 40060, "Interaction has already been acknowledged.")
		return
	case time.Since(in.Dispatched) > interactionWindow:
		in.Rejected++
		apiError(w, http.StatusNotFound, 10062, "Unknown interaction")
		return
	}
	content := ""
	var rows *[]DiscordRow
	if body.Data != nil {
		if body.Data.Content != nil {
			content = *body.Data.Content
		}
		rows = body.Data.Components
	}
	switch body.Type {
	case 4:
		var rs []DiscordRow
		if rows != nil {
			rs = *rows
		}
		if msg := validate(content, rs, nil); msg != "" || content == "" {
			apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body "+msg)
			return
		}
		m := &DiscordMessage{ID: d.idLocked(), ChannelID: in.ChannelID, AuthorID: d.BotID, Bot: true, Content: content, Components: rs, CreatedAt: time.Now(), Interaction: in.ID}
		d.messages = append(d.messages, m)
		d.dispatchLocked("MESSAGE_CREATE", d.messageJSONLocked(m))
	case 5, 6:
	case 7:
		m := d.findLocked(in.ChannelID, in.MessageID)
		if m == nil {
			apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: no message to update")
			return
		}
		m.Edits = append(m.Edits, m.Content)
		if body.Data != nil && body.Data.Content != nil {
			m.Content = content
		}
		if rows != nil {
			m.Components = *rows
		}
	default:
		apiError(w, http.StatusBadRequest, 50035, fmt.Sprintf("Invalid Form Body: interaction response type %d", body.Type))
		return
	}
	in.Acked, in.AckType, in.AckContent = time.Now(), body.Type, content
	d.notifyLocked()
	w.WriteHeader(http.StatusNoContent)
}

func (d *Discord) followUp(w http.ResponseWriter, r *http.Request) {
	var p messagePayload
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
		apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var in *DiscordInteraction
	for _, x := range d.inter {
		if x.Token == r.PathValue("token") {
			in = x
		}
	}
	if in == nil || in.Acked.IsZero() || r.PathValue("app") != d.AppID {
		apiError(w, http.StatusNotFound, 10015, "Unknown Webhook")
		return
	}
	content := ""
	if p.Content != nil {
		content = *p.Content
	}
	if msg := validate(content, nil, nil); msg != "" || content == "" {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body "+msg)
		return
	}
	m := &DiscordMessage{ID: d.idLocked(), ChannelID: in.ChannelID, AuthorID: d.BotID, Bot: true, Content: content, CreatedAt: time.Now(), Interaction: in.ID}
	d.messages = append(d.messages, m)
	out := d.messageJSONLocked(m)
	d.dispatchLocked("MESSAGE_CREATE", out)
	d.notifyLocked()
	writeJSON(w, http.StatusOK, out)
}
