package gemini

import "testing"

// FuzzStream: see adaptertest.Protocol.Fuzz.
func FuzzStream(f *testing.F) { protocol().Fuzz(f) }
