package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// History returns n messages of size characters, user and assistant in
// turn, ending with the assistant's: a stored conversation.
func History(n, size int) []*agentv1.Message {
	filler := strings.Repeat("lorem ipsum ", size/12+1)
	msgs := make([]*agentv1.Message, n)
	for i := range msgs {
		role := agentv1.Role_ROLE_USER
		if i%2 == 1 || i == n-1 {
			role = agentv1.Role_ROLE_ASSISTANT
		}
		text := fmt.Sprintf("message %d: ", i)
		text += filler[:max(size-len(text), 0)]
		msgs[i] = &agentv1.Message{Role: role, Parts: []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: text}}}}
	}
	return msgs
}

// TouchAgents creates n agents on c with config cfg and no tools, and sets
// the history h on each with SetHistory, workers at a time; it returns
// their ids, in order.
func TouchAgents(ctx context.Context, c *client.Client, cfg *agentv1.AgentConfig, n, workers int, h []*agentv1.Message) ([]string, error) {
	ids := make([]string, n)
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				a, err := c.CreateAgent(ctx, client.AgentOptions{Config: cfg, Tools: []string{}})
				if err == nil {
					err = a.SetHistory(ctx, h)
				}
				if err != nil {
					errs <- fmt.Errorf("agent %d: %w", i, err)
					return
				}
				ids[i] = a.ID
			}
		})
	}
	var err error
feed:
	for i := range n {
		select {
		case next <- i:
		case err = <-errs:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return ids, err
}

// Scrape reads a Prometheus /metrics endpoint at addr with the Prometheus
// text parser: every counter and gauge sample, and every histogram's count
// as NAME_count, by series name with its labels as name{k="v",…} (sorted,
// as the endpoint gives them).
func Scrape(addr string) (map[string]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing /metrics: %w", err)
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			suffix := key[len(name):]
			switch {
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				out[name+"_count"+suffix] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out, nil
}
