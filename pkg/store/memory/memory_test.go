package memory_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/memory"
	"github.com/agentcore/agentcore/pkg/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{Open: func(*testing.T) store.Store { return memory.New() }})
}

func BenchmarkStep(b *testing.B) { storetest.Bench(b, memory.New()) }
