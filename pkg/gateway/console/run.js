// A run as it happens: each event of a send (or compaction) drawn as it
// arrives: model text as it streams, tool calls with their live output,
// results, usage, retries, permission and elicitation requests and errors. A child run (an
// agent called as a tool) is drawn inside the call that started it, from
// the events its ancestors' streams carry.

import {h, append, enumName, usageText, pretty, time, durationText} from './dom.js';
import {elicitationCard} from './elicit.js';

/** outputView draws a tool's output: text, JSON or content parts. */
export function outputView(out) {
  if (!out) return h('pre.output', '');
  if (out.content) return h('div.parts', (out.content.parts || []).map(partView));
  if (out.json !== undefined) return h('pre.output', pretty(out.json));
  return h('pre.output', out.text ?? '');
}

/** partView draws one part of a message. */
export function partView(p) {
  if (p.text !== undefined) return h('pre.text', p.text);
  if (p.reasoning) return h('details.reasoning', h('summary', 'reasoning'), h('pre', p.reasoning.text || ''));
  const file = p.image || p.file || p.audio || p.video;
  if (file) {
    const src = file.url || `data:${file.mediaType};base64,${file.data}`;
    if (p.image && /^data:image\/|^https?:/.test(src)) return h('img.media', {src, alt: file.filename || file.mediaType});
    return h('div.file', `${file.mediaType} ${file.filename || ''}`);
  }
  if (p.toolCall) return h('div.call', h('code', p.toolCall.name), h('pre.args', pretty(p.toolCall.arguments)));
  if (p.toolResult) {
    return h(`div.result${p.toolResult.error ? '.failed' : ''}`,
      h('code', p.toolResult.toolName), ' → ', outputView(p.toolResult.output));
  }
  return h('pre', JSON.stringify(p));
}

/** statusReason reads the ErrorInfo reason of a google.rpc.Status. */
export function statusReason(st) {
  for (const d of st.details || []) {
    if (d['@type']?.endsWith('google.rpc.ErrorInfo')) return {reason: d.reason, metadata: d.metadata || {}};
  }
  return {reason: '', metadata: {}};
}

/** runUsageText is a RunUsage (what a run or a run tree spent) in a few words. */
export function runUsageText(u) {
  const parts = [`${u.modelRequests || 0} model requests`, `${u.toolCalls || 0} tool calls`,
    `${u.inputTokens || 0} in / ${u.outputTokens || 0} out tokens`];
  if (u.childRuns) parts.push(`${u.childRuns} child runs`);
  if (u.cost) parts.push(`cost ${Number(u.cost).toFixed(4)}`);
  return parts.join(' · ');
}

/** answerText is a permission request's answer (a PermissionDecision) in words. */
export function answerText(d) {
  switch (d.outcome) {
    case 'PERMISSION_OUTCOME_ALLOWED':
      return 'allowed';
    case 'PERMISSION_OUTCOME_DENIED':
      return `denied${d.reason ? ': ' + d.reason : ''}`;
    case 'PERMISSION_OUTCOME_NOT_ANSWERED':
      return 'not answered: the run was stopped';
  }
  return 'answered';
}

/**
 * RunView draws a run's events into its element. answer, when given, is
 * called with (runId, toolCallId, allow, reason) to answer a permission
 * request; elicit with (runId, elicitationId, action, content) to answer an
 * elicitation request. Both return a promise.
 */
export class RunView {
  constructor({answer, elicit} = {}) {
    this.el = h('section.run', {'aria-live': 'polite'});
    this.answer = answer;
    this.elicit = elicit;
    this.elicitations = new Map(); // elicitation id -> card
    this.runId = '';
    this.lastSeq = 0;
    this.steps = new Map(); // step number -> {el, text, reasoning}
    this.calls = new Map(); // tool call id -> {el, output, status}
    this.permissions = new Map(); // tool call id -> card
    this.compaction = null;
    this.current = null; // the latest step
    this.ended = false;
    this.children = new Map(); // child run id -> RunView, descendants at any depth (the root's map)
  }

  /** child draws an event of a child run (a ChildRunEvent) in the view of that run, made inside its parent's call. */
  child(c) {
    let v = this.children.get(c.runId);
    if (!v) {
      v = new RunView({answer: this.answer, elicit: this.elicit});
      v.children = this.children; // one map for the tree: a grandchild finds its parent's view
      v.el.classList.add('child-run');
      v.el.dataset.run = c.runId;
      v.el.dataset.depth = String(c.depth || 1);
      append(v.el, h('div.line.muted', 'child run ', h('a', {href: `#/runs/${encodeURIComponent(c.runId)}`}, h('code', c.runId)),
        ` of agent ${c.agentId} (depth ${c.depth || 1})`));
      const parent = c.parentRunId === this.runId ? this : this.children.get(c.parentRunId);
      const call = parent?.calls.get(c.toolCallId);
      append(call ? call.el : (parent || this).el, v.el);
      this.children.set(c.runId, v);
    }
    v.event({name: 'event', data: c.event});
  }

  /** event draws one event of the stream (a StreamEvent). */
  event(se) {
    if (se.name === 'error') {
      this.fail(se.data);
      return;
    }
    const ev = se.data;
    const seq = Number(ev.seq || 0);
    if (seq && seq <= this.lastSeq) return; // seen already (a reconnection)
    this.lastSeq = seq || this.lastSeq;
    if (ev.runId) this.runId = ev.runId;
    if (ev.runStarted) {
      append(this.el, h('div.line.muted', `run ${ev.runId} started ${time(ev.time)}`));
    } else if (ev.runResumed) {
      const r = ev.runResumed;
      const cut = (r.rerunCallIds || []).length + (r.reportedCallIds || []).length;
      append(this.el, h('div.line.resumed', `resumed after a crash ${time(ev.time)}: attempt ${r.attempt}${r.replica ? ` on replica ${r.replica}` : ''}, from step ${r.step}` +
        (cut ? `; ${(r.rerunCallIds || []).length} cut-off call(s) run again, ${(r.reportedCallIds || []).length} reported` : '')));
    } else if (ev.modelRequest) {
      this.step(ev.modelRequest.step, ev.modelRequest);
    } else if (ev.modelDelta) {
      const s = this.step(ev.modelDelta.step);
      if (ev.modelDelta.text !== undefined) s.text.textContent += ev.modelDelta.text;
      if (ev.modelDelta.reasoning !== undefined) {
        s.reasoning.hidden = false;
        s.reasoning.lastChild.textContent += ev.modelDelta.reasoning;
      }
    } else if (ev.modelResponse) {
      const s = this.step(ev.modelResponse.step);
      if (!s.text.textContent && ev.modelResponse.text) s.text.textContent = ev.modelResponse.text;
      s.usage.textContent = usageText(ev.modelResponse.usage);
    } else if (ev.permissionRequest) {
      this.permission(ev.permissionRequest);
    } else if (ev.elicitationRequest) {
      const e = ev.elicitationRequest;
      const card = elicitationCard(e, () => this.runId, this.elicit);
      this.elicitations.set(e.elicitationId, card);
      append(this.calls.get(e.toolCallId)?.el || this.el, card); // asked by the running call
    } else if (ev.elicitationResult) {
      this.elicitations.get(ev.elicitationResult.elicitationId)?.decided(ev.elicitationResult);
    } else if (ev.toolCall) {
      const c = this.call(ev.toolCall.toolCallId, ev.toolCall.toolName, ev.toolCall.arguments, ev.toolCall.step);
      const answer = ev.toolCall.permission; // set when the run asked permission
      if (answer) {
        this.permissions.get(ev.toolCall.toolCallId)?.decided(answer);
        c.notRun = answer.outcome !== 'PERMISSION_OUTCOME_ALLOWED';
        if (c.notRun) c.status.textContent = `not run (${answerText(answer)})`;
      }
    } else if (ev.toolOutput) {
      const c = this.call(ev.toolOutput.toolCallId, ev.toolOutput.toolName);
      const stream = enumName(ev.toolOutput.stream, 'OUTPUT_STREAM_') || 'output';
      append(c.output, h(`span.${stream}`, ev.toolOutput.data));
    } else if (ev.toolResult) {
      const r = ev.toolResult;
      const c = this.call(r.toolCallId, r.toolName);
      c.el.classList.add(r.error ? 'failed' : 'done');
      if (!c.notRun) c.status.textContent = `${r.error ? 'error' : 'done'}${r.stop ? ', stop' : ''} in ${durationText(r.duration) || '?'}`;
      append(c.el, h('div.tool-result', outputView(r.output)));
      this.permissions.get(r.toolCallId)?.settle();
    } else if (ev.step) {
      // the step's parts are drawn already
    } else if (ev.retry) {
      const r = ev.retry;
      append(this.el, h('div.line.retry', `retry ${r.attempt}${r.compact ? ' (compaction)' : ''} in ${durationText(r.delay)}: ${enumName(r.kind, 'ERROR_KIND_')}: ${r.message}`));
    } else if (ev.fallback) {
      const f = ev.fallback;
      append(this.el, h('div.line.retry', `${f.from?.protocol} model ${f.from?.model} failed (${enumName(f.kind, 'ERROR_KIND_')}: ${f.message}); asking the fallback ${f.to?.protocol} model ${f.to?.model}`));
    } else if (ev.compactStarted) {
      this.compaction = h('pre.summary');
      append(this.el, h('div.compaction', h('div.line.muted', `compacting ${ev.compactStarted.tokens} tokens${ev.compactStarted.manual ? ' (asked for)' : ''}`), this.compaction));
    } else if (ev.compactDelta) {
      if (this.compaction) this.compaction.textContent += ev.compactDelta.text;
    } else if (ev.compactFinished) {
      if (this.compaction) this.compaction.textContent = ev.compactFinished.summary;
      append(this.el, h('div.line.muted', `compacted · ${usageText(ev.compactFinished.usage)}`));
    } else if (ev.child) {
      this.child(ev.child);
    } else if (ev.budgetExceeded) {
      const b = ev.budgetExceeded;
      append(this.el, h('div.line.budget', `budget reached: ${enumName(b.limit, 'BUDGET_LIMIT_').replace(/-/g, ' ')} ${b.used ?? 0} of ${b.max ?? 0}` +
        (b.budgetRunId && b.budgetRunId !== this.runId ? ` (the budget of run ${b.budgetRunId})` : '')));
    } else if (ev.result) {
      this.finish(ev.result);
    }
  }

  step(n, req) {
    let s = this.steps.get(n);
    if (!s) {
      const text = h('pre.event-text');
      const reasoning = h('details.reasoning', {hidden: true}, h('summary', 'reasoning'), h('pre'));
      const usage = h('span.usage');
      const el = h('div.step', h('div.step-head', h('strong', `step ${n}`), ' ', usage), reasoning, text);
      s = {el, text, reasoning, usage};
      this.steps.set(n, s);
      append(this.el, el);
    }
    this.current = s;
    if (req) s.usage.textContent = `asking the model: ${req.messageCount} messages, ${(req.tools || []).length} tools`;
    return s;
  }

  call(id, name, args, step) {
    let c = this.calls.get(id);
    if (!c) {
      const output = h('pre.tool-output');
      const status = h('span.status', 'running');
      const el = h('div.tool-call', {dataset: {callId: id}},
        h('div.tool-head', h('code', name), ' ', status), h('pre.args', pretty(args ?? '')), output);
      c = {el, output, status};
      this.calls.set(id, c);
      const parent = step ? this.step(step).el : this.el;
      append(parent, el);
    }
    return c;
  }

  permission(p) {
    const reason = h('input', {type: 'text', placeholder: 'reason (told to the model when denied)', 'aria-label': 'reason'});
    const state = h('span.status', 'waiting for an answer');
    const buttons = h('span.buttons');
    const card = h('div.permission', {dataset: {callId: p.toolCallId}},
      h('div', h('strong', 'Permission: '), h('code', p.toolName), ' wants to run with'),
      h('pre.args', pretty(p.arguments)), buttons, state);
    card.settle = () => {
      buttons.replaceChildren();
      // A server older than the tool_call event's answer says no more.
      if (state.textContent === 'waiting for an answer') state.textContent = 'answered';
    };
    // decided shows the answer the run got, from whichever client (or the
    // server's -permission-timeout) gave it: what a past run replays too.
    card.decided = (answer) => {
      state.textContent = answerText(answer);
      card.dataset.answer = enumName(answer.outcome, 'PERMISSION_OUTCOME_');
      card.settle();
    };
    if (this.answer) {
      const send = async (allow) => {
        buttons.querySelectorAll('button').forEach((b) => { b.disabled = true; });
        try {
          await this.answer(this.runId, p.toolCallId, allow, reason.value);
          if (state.textContent === 'waiting for an answer') {
            state.textContent = answerText({outcome: allow ? 'PERMISSION_OUTCOME_ALLOWED' : 'PERMISSION_OUTCOME_DENIED', reason: reason.value});
          }
          card.settle();
        } catch (err) {
          state.textContent = `could not answer: ${err.message}`;
          buttons.querySelectorAll('button').forEach((b) => { b.disabled = false; });
        }
      };
      append(buttons, h('button.allow', {type: 'button', onclick: () => send(true)}, 'Allow'), ' ',
        h('button.deny', {type: 'button', onclick: () => send(false)}, 'Deny'), ' ', reason);
    }
    this.permissions.set(p.toolCallId, card);
    append(this.current ? this.current.el : this.el, card); // asked after the step's model answer
  }

  finish(r) {
    this.ended = true;
    const out = r.output !== undefined && r.output !== null ? h('pre.output', pretty(r.output)) : null;
    append(this.el, h('div.run-result',
      h('div', h('strong', 'result: '), enumName(r.reason, 'END_REASON_'), ` · ${r.steps} steps · ${usageText(r.usage)}`),
      r.treeUsage && Number(r.treeUsage.childRuns || 0) > 0 ? h('div.tree-usage', `with its child runs: ${runUsageText(r.treeUsage)}`) : null,
      r.text ? h('pre.text', r.text) : null, out));
  }

  /** fail draws the status the stream ended with (an "error" event, or a failed call). */
  fail(st) {
    this.ended = true;
    const {reason, metadata} = statusReason(st);
    const kind = metadata.kind ? ` (${metadata.kind})` : '';
    append(this.el, h('div.error.run-error', {role: 'alert'}, h('strong', reason || `code ${st.code}`), `${kind} `, st.message || ''));
  }
}
