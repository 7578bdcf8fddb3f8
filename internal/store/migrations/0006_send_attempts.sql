-- send_attempted_at is when the outbox last handed an outbound message to
-- its channel (MarkSending), before sent_at records that the channel took
-- it. A message with an attempt but no sent mark may have been delivered
-- (the process stopped, or the sent mark could not be written, between the
-- two): at the next start its channel decides whether to send it again.
ALTER TABLE messages ADD COLUMN send_attempted_at TEXT;
