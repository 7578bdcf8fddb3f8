package tokens

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"func main() {}", 4},
	} {
		if got := Count(c.text); got != c.want {
			t.Errorf("Count(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

func TestCountConcurrent(t *testing.T) {
	done := make(chan int)
	for range 4 {
		go func() { done <- Count("the quick brown fox jumps over the lazy dog") }()
	}
	for range 4 {
		if n := <-done; n != 9 {
			t.Errorf("Count = %d, want 9", n)
		}
	}
}
