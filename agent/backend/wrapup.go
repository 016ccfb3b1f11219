// The budget wrap-up of the built-in agent: once a turn has spent the
// task's token budget, one last request asks the model to summarise and
// stop, and the turn ends with ErrBudgetSpent.

package backend

import (
	"context"
	"errors"
	"fmt"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/internal/llm"
	"github.com/grub-dev/grub/prompts"
)

// wrapUp makes the one request that ends a turn whose token budget is
// spent.
func (r *turnRun) wrapUp(ctx context.Context) (agent.Result, error) {
	used, left := r.tokensUsed(), r.turn.TokenBudgetLeft
	spent := fmt.Errorf("%w: this turn used %d tokens and the task had %d left", agent.ErrBudgetSpent, used, left)
	locale := r.turn.Locale
	if locale == "" {
		locale = "en"
	}
	reason := "The token budget of this task is spent."
	if locale == "zh" {
		reason = "本任务的 token 预算已用完。"
	}
	text, err := prompts.RenderWrapUp(prompts.WrapUp{Locale: locale, Reason: reason})
	if err != nil {
		return r.result(""), errors.Join(spent, err)
	}
	r.msgs = append(r.msgs, llm.Message{Role: llm.RoleUser, Content: text})
	resp, err := r.request(ctx, true)
	if err != nil {
		if errors.Is(err, agent.ErrUsageLimited) || errors.Is(err, agent.ErrTimeout) || ctx.Err() != nil {
			return r.result(""), err
		}
		return r.result(""), fmt.Errorf("%w (the wrap-up request failed: %v)", spent, err)
	}
	final := resp.Message.Content
	if err := r.tr.write(TranscriptEntry{Type: EntryFinal, Text: final}, true); err != nil {
		return r.result(final), errors.Join(spent, err)
	}
	return r.result(final), spent
}
