package gitrun

import "bytes"

// Capped keeps at most Max bytes of what is written to it: the head, or
// the tail when Tail is set. Writes never fail; Cut tells that something
// was dropped.
type Capped struct {
	Max  int
	Tail bool
	buf  bytes.Buffer
	cut  bool
}

func (c *Capped) Write(p []byte) (int, error) {
	n := len(p)
	if c.Tail {
		c.buf.Write(p)
		if over := c.buf.Len() - c.Max; over > 0 {
			c.buf.Next(over)
			c.cut = true
		}
		return n, nil
	}
	if room := c.Max - c.buf.Len(); room < len(p) {
		p = p[:max(room, 0)]
		c.cut = true
	}
	c.buf.Write(p)
	return n, nil
}

// String returns what was kept.
func (c *Capped) String() string { return c.buf.String() }

// Bytes returns what was kept.
func (c *Capped) Bytes() []byte { return c.buf.Bytes() }

// Cut tells that some of what was written was dropped.
func (c *Capped) Cut() bool { return c.cut }
