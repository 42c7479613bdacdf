// Command quickstart is the Go client's example as a program: a scripted travel agent
// whose two tools run here, in the caller. With a daemon running (`make run` serves
// examples/scripts, where "scripted:demo" is):
//
//	go run ./cmd/quickstart               # the daemon at $LUOSHOD_ADDRESS, else 127.0.0.1:50051
//	go run ./cmd/quickstart ADDR SESSION  # or say where, and which session
//
// Each run is a new session unless one is named, so running it again plays the whole
// script again rather than continuing a finished conversation.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"

	luosho "github.com/luoshod/luoshod/clients/go"
)

func main() {
	addr := os.Getenv("LUOSHOD_ADDRESS")
	if len(os.Args) > 1 {
		addr = os.Args[1]
	}
	if addr == "" {
		addr = "127.0.0.1:50051"
	}
	session := ""
	if len(os.Args) > 2 {
		session = os.Args[2]
	} else {
		suffix := make([]byte, 3)
		_, _ = rand.Read(suffix)
		session = "trip-" + hex.EncodeToString(suffix)
	}
	fmt.Printf("session %s on %s\n", session, addr)
	c, err := luosho.Dial(addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	agent := &luosho.Agent{Model: "scripted:demo", Tools: []luosho.Tool{{Name: "get_weather"}, {Name: "convert"}}}
	weather := func(ctx context.Context, args json.RawMessage) (any, error) {
		return map[string]any{"city": "Lisbon", "sky": "sunny", "celsius": 24}, nil
	}
	convert := func(ctx context.Context, args json.RawMessage) (any, error) { return 108.0, nil }
	res, err := c.Execute(context.Background(), session, agent, "Plan a day in Lisbon",
		luosho.Tools{"get_weather": weather, "convert": convert})
	if err != nil {
		log.Fatal(err)
	}
	// "stop", as the Python and TypeScript quickstarts print it.
	reason := strings.ToLower(strings.TrimPrefix(res.FinishReason.String(), "FINISH_REASON_"))
	fmt.Println(reason, "-", res.FinalText)
}
