package testkit

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// gateway is the fake's gateway state: the sessions the bot identified
// (each with its sequence and its dispatched events, for RESUME) and the
// current connection.
type gateway struct {
	sessions map[string]*gwSession
	// current is the session of the latest IDENTIFY.
	current *gwSession
	conn    *gwConn
	// identifies, resumes and heartbeats count what the bot sent.
	identifies, resumes, heartbeats int
	// overlap is how many already-delivered events a RESUME replays again.
	overlap int
}

type gwSession struct {
	id     string
	seq    int64
	events []gwEvent
}

type gwEvent struct {
	seq  int64
	name string
	data json.RawMessage
}

// gwConn is one websocket connection; ready once it identified or
// resumed.
type gwConn struct {
	ws      *websocket.Conn
	session *gwSession
	// beats counts heartbeats on this connection.
	beats int
}

// gatewayFrame is a gateway payload from the bot.
type gatewayFrame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
}

func (d *Discord) serveGateway(w http.ResponseWriter, r *http.Request) {
	ws, err := d.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	d.mu.Lock()
	hb := d.heartbeat
	d.mu.Unlock()
	if err := ws.WriteJSON(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": hb.Milliseconds()}}); err != nil {
		return
	}
	c := &gwConn{ws: ws}
	defer func() {
		d.mu.Lock()
		if d.gw.conn == c {
			d.gw.conn = nil
		}
		d.notifyLocked()
		d.mu.Unlock()
	}()
	for {
		var f gatewayFrame
		if err := ws.ReadJSON(&f); err != nil {
			return
		}
		switch f.Op {
		case 1:
			d.mu.Lock()
			c.beats++
			d.gw.heartbeats++
			err := ws.WriteJSON(map[string]any{"op": 11})
			d.notifyLocked()
			d.mu.Unlock()
			if err != nil {
				return
			}
		case 2:
			var id struct {
				Token   string `json:"token"`
				Intents int    `json:"intents"`
			}
			if json.Unmarshal(f.D, &id) != nil || strings.TrimPrefix(id.Token, "Bot ") != d.Token {
				ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."))
				return
			}
			d.mu.Lock()
			s := &gwSession{id: "session-" + d.idLocked()}
			d.gw.sessions[s.id] = s
			d.gw.current = s
			d.gw.identifies++
			d.takeOverLocked(c)
			c.session = s
			d.dispatchLocked("READY", map[string]any{
				"v": 10, "user": d.userJSON(d.BotID, true), "session_id": s.id,
				"resume_gateway_url": "ws" + strings.TrimPrefix(d.srv.URL, "http") + "/gateway/",
				"guilds":             []any{}, "private_channels": []any{},
				"application": map[string]any{"id": d.AppID, "flags": 0},
			})
			d.notifyLocked()
			d.mu.Unlock()
		case 6:
			var res struct {
				Token     string `json:"token"`
				SessionID string `json:"session_id"`
				Seq       int64  `json:"seq"`
			}
			json.Unmarshal(f.D, &res)
			d.mu.Lock()
			s := d.gw.sessions[res.SessionID]
			if s == nil || strings.TrimPrefix(res.Token, "Bot ") != d.Token {
				ws.WriteJSON(map[string]any{"op": 9, "d": false})
				d.mu.Unlock()
				continue
			}
			d.gw.resumes++
			d.takeOverLocked(c)
			c.session = s
			from := res.Seq - int64(d.gw.overlap)
			for _, e := range s.events {
				if e.seq > from {
					ws.WriteJSON(map[string]any{"op": 0, "s": e.seq, "t": e.name, "d": e.data})
				}
			}
			d.dispatchLocked("RESUMED", map[string]any{})
			d.notifyLocked()
			d.mu.Unlock()
		}
	}
}

// takeOverLocked makes c the current connection, closing an older one.
func (d *Discord) takeOverLocked(c *gwConn) {
	if old := d.gw.conn; old != nil && old != c {
		old.ws.Close()
	}
	d.gw.conn = c
}

// dispatchLocked sends an event on the current session (and connection,
// if one is open); events sent while disconnected are delivered on
// RESUME.
func (d *Discord) dispatchLocked(name string, data any) {
	c := d.gw.conn
	if c == nil || c.session == nil {
		// Disconnected: the event waits in the session for a RESUME. With
		// no session at all there is nobody to deliver to, as on Discord.
		if d.gw.current != nil {
			d.appendLocked(d.gw.current, name, data)
		}
		return
	}
	e := d.appendLocked(c.session, name, data)
	if err := c.ws.WriteJSON(map[string]any{"op": 0, "s": e.seq, "t": e.name, "d": e.data}); err != nil {
		d.t.Logf("fake discord: dispatch %s: %v", name, err)
	}
}

func (d *Discord) appendLocked(s *gwSession, name string, data any) gwEvent {
	raw, err := json.Marshal(data)
	if err != nil {
		d.t.Errorf("fake discord: marshal %s: %v", name, err)
	}
	s.seq++
	e := gwEvent{seq: s.seq, name: name, data: raw}
	s.events = append(s.events, e)
	return e
}

// WaitConnected waits until the bot has a ready gateway connection (after
// IDENTIFY or RESUME) that sent at least one heartbeat, and the bot has
// identified at least identifies times and resumed at least resumes
// times.
func (d *Discord) WaitConnected(t testing.TB, identifies, resumes int) {
	t.Helper()
	d.WaitFor(t, "a ready gateway connection", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		c := d.gw.conn
		return c != nil && c.session != nil && c.beats > 0 && d.gw.identifies >= identifies && d.gw.resumes >= resumes
	})
}

// Sessions returns how often the bot identified and resumed.
func (d *Discord) Sessions() (identifies, resumes int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gw.identifies, d.gw.resumes
}

// Drop cuts the gateway connection without a close frame, as a network
// failure would.
func (d *Discord) Drop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.gw.conn; c != nil {
		c.ws.UnderlyingConn().Close()
		d.gw.conn = nil
	}
}

// RequestReconnect sends op 7 RECONNECT: the bot must reconnect and
// resume.
func (d *Discord) RequestReconnect() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.gw.conn; c != nil {
		c.ws.WriteJSON(map[string]any{"op": 7, "d": nil})
	}
}

// ReplayOnResume makes every later RESUME deliver the last n events again
// even though the bot saw them, as Discord may around a reconnect.
func (d *Discord) ReplayOnResume(n int) {
	d.mu.Lock()
	d.gw.overlap = n
	d.mu.Unlock()
}

// DiscordPost is a message a user posts.
type DiscordPost struct {
	// ID is the message id; a new one when empty. Reusing an id delivers
	// the same message again.
	ID string
	// ChannelID defaults to the author's DM channel with the bot.
	ChannelID string
	// GuildID makes it a guild (server) message.
	GuildID  string
	AuthorID string
	Bot      bool
	Content  string
	// Attachments are file names; they are served under /attachments/
	// and count as downloads when fetched.
	Attachments []string
	// Files are attachments with content, served the same way.
	Files []DiscordFile
}

// Post delivers a MESSAGE_CREATE and returns the message id.
func (d *Discord) Post(p DiscordPost) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p.ID == "" {
		p.ID = d.idLocked()
	}
	if p.ChannelID == "" && p.GuildID == "" {
		p.ChannelID = d.dmLocked(p.AuthorID).ID
	}
	if p.ChannelID == "" {
		p.ChannelID = d.idLocked()
	}
	m := &DiscordMessage{ID: p.ID, ChannelID: p.ChannelID, GuildID: p.GuildID, AuthorID: p.AuthorID, Bot: p.Bot, Content: p.Content, CreatedAt: time.Now()}
	if d.findLocked(p.ChannelID, p.ID) == nil {
		d.messages = append(d.messages, m)
	}
	out := d.messageJSONLocked(m)
	var atts []any
	for i, name := range p.Attachments {
		atts = append(atts, map[string]any{"id": p.ID + strconv.Itoa(i), "filename": name, "size": 10, "url": d.srv.URL + "/attachments/" + name})
	}
	for i, f := range p.Files {
		if d.files == nil {
			d.files = map[string][]byte{}
		}
		d.files[f.Name] = f.Data
		atts = append(atts, map[string]any{"id": p.ID + "f" + strconv.Itoa(i), "filename": f.Name, "size": len(f.Data), "content_type": f.ContentType,
			"url": d.srv.URL + "/attachments/" + f.Name})
	}
	if atts != nil {
		out["attachments"] = atts
	}
	d.dispatchLocked("MESSAGE_CREATE", out)
	d.notifyLocked()
	return p.ID
}

// DM delivers a direct message from userID to the bot and returns its id.
func (d *Discord) DM(userID, content string) string {
	return d.Post(DiscordPost{AuthorID: userID, Content: content})
}

// Click presses the button with customID on the bot's message messageID,
// as userID, and returns the interaction id.
func (d *Discord) Click(userID, messageID, customID string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var msg *DiscordMessage
	for _, m := range d.messages {
		if m.ID == messageID {
			msg = m
		}
	}
	if msg == nil {
		d.t.Fatalf("fake discord: click on unknown message %s", messageID)
		return ""
	}
	in := d.newInteractionLocked(userID, msg.ChannelID)
	in.MessageID = messageID
	d.dispatchLocked("INTERACTION_CREATE", map[string]any{
		"id": in.ID, "application_id": d.AppID, "type": 3, "token": in.Token, "version": 1,
		"channel_id": in.ChannelID, "channel": map[string]any{"id": in.ChannelID, "type": 1},
		"user": d.userJSON(userID, false), "message": d.messageJSONLocked(msg),
		"data":    map[string]any{"custom_id": customID, "component_type": 2},
		"context": 1, "locale": "en-US", "app_permissions": "0",
	})
	d.notifyLocked()
	return in.ID
}

// Slash runs the slash command name in userID's DM with the bot, with
// string options, and returns the interaction id.
func (d *Discord) Slash(userID, name string, options map[string]string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var cmdID string
	for _, c := range d.commands {
		if c.Name == name {
			cmdID = c.ID
		}
	}
	if cmdID == "" {
		d.t.Fatalf("fake discord: /%s is not registered", name)
		return ""
	}
	in := d.newInteractionLocked(userID, d.dmLocked(userID).ID)
	opts := []any{}
	for k, v := range options {
		opts = append(opts, map[string]any{"name": k, "type": 3, "value": v})
	}
	d.dispatchLocked("INTERACTION_CREATE", map[string]any{
		"id": in.ID, "application_id": d.AppID, "type": 2, "token": in.Token, "version": 1,
		"channel_id": in.ChannelID, "channel": map[string]any{"id": in.ChannelID, "type": 1},
		"user":    d.userJSON(userID, false),
		"data":    map[string]any{"id": cmdID, "name": name, "type": 1, "options": opts},
		"context": 1, "locale": "en-US", "app_permissions": "0",
	})
	d.notifyLocked()
	return in.ID
}

func (d *Discord) newInteractionLocked(userID, channelID string) *DiscordInteraction {
	id := d.idLocked()
	in := &DiscordInteraction{ID: id, Token: "itoken-" + id, ChannelID: channelID, UserID: userID, Dispatched: time.Now()}
	d.inter[id] = in
	return in
}
