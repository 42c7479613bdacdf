package luosho_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	luosho "github.com/luoshod/luoshod/clients/go"
)

// addr is the daemon the README's example talks to (started by TestMain: examples
// cannot start one themselves).
var addr string

// The README example, verbatim (TestReadmeExample checks it): the daemon serves
// examples/scripts, so "scripted:demo" plays examples/scripts/demo.json.
func Example() {
	c, err := luosho.Dial(addr) // e.g. "127.0.0.1:50051"
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	agent := &luosho.Agent{Model: "scripted:demo", Tools: []luosho.Tool{{Name: "get_weather"}, {Name: "convert"}}}
	weather := func(ctx context.Context, args json.RawMessage) (any, error) { return "sunny", nil }
	convert := func(ctx context.Context, args json.RawMessage) (any, error) { return 108.0, nil }
	res, err := c.Execute(context.Background(), "trip-1", agent, "Plan a day in Lisbon",
		luosho.Tools{"get_weather": weather, "convert": convert})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.FinishReason, res.FinalText)
	// Output: FINISH_REASON_STOP Lisbon is sunny today, and 100 EUR is about 108 USD. Enjoy the trip!
}

// TestReadmeExample: README.md's Go block is the body of Example, line for line, so the
// README's example is run (and its output checked) by `go test`.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no ```go block")
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	body := regexp.MustCompile(`(?s)\nfunc Example\(\) \{\n(.*?)\n\t// Output:`).FindSubmatch(src)
	if body == nil {
		t.Fatal("no Example in example_test.go")
	}
	norm := func(b []byte) []string {
		var out []string
		for _, l := range strings.Split(string(bytes.TrimSpace(b)), "\n") {
			if l = strings.Join(strings.Fields(l), " "); l != "" {
				out = append(out, l)
			}
		}
		return out
	}
	readmeLines, exampleLines := norm(m[1]), norm(body[1])
	if strings.Join(readmeLines, "\n") != strings.Join(exampleLines, "\n") {
		t.Fatalf("README.md's Go block differs from Example:\n--- README\n%s\n--- Example\n%s",
			strings.Join(readmeLines, "\n"), strings.Join(exampleLines, "\n"))
	}
}

// startExampleDaemon gives Example a daemon serving examples/scripts (from TestMain).
func startExampleDaemon() (stop func(), err error) {
	dir, err := os.MkdirTemp("", "luosho-example-")
	if err != nil {
		return nil, err
	}
	scripts, _ := filepath.Abs(filepath.Join("..", "..", "examples", "scripts"))
	a, kill, err := launch(dir, "--scripts-dir", scripts)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	addr = a
	return func() { kill(); os.RemoveAll(dir) }, nil
}
