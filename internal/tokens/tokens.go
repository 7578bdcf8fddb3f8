// Package tokens counts what a text costs a model, with a real BPE
// tokenizer (tiktoken's o200k_base, the encoding of current OpenAI models;
// other providers' tokenizers land within a few percent of it on English
// and code). The vocabulary is embedded (tiktoken-go-loader): counting
// never touches the network.
//
// The encoder is loaded once, on first use (about 100 ms), and is safe
// for concurrent use. tokens imports no package of Fetch's.
package tokens

import (
	"sync"

	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding is the BPE encoding Count uses.
const Encoding = "o200k_base"

var encoder = sync.OnceValue(func() *tiktoken.Tiktoken {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(Encoding)
	if err != nil {
		// The vocabulary is embedded in the binary; failing to read it
		// is a broken build, not a condition to handle.
		panic("tokens: load " + Encoding + ": " + err.Error())
	}
	return enc
})

// Count is the number of tokens of text.
func Count(text string) int {
	if text == "" {
		return 0
	}
	return len(encoder().EncodeOrdinary(text))
}
