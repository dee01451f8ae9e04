// A tool asking the person behind the run for input (an elicitation
// request): its message and a form drawn from the requested schema, whose
// answer (accept with the values, decline, cancel) goes to
// RespondElicitation. Fields left empty are left out: the server fills in
// the schema's defaults, shown here as the fields' starting values.

import {h, append, enumName} from './dom.js';

/** field draws the input of one property of the form's schema. */
function field(name, prop, required) {
  const label = prop.title || name;
  const aria = {'aria-label': label, name};
  let input;
  if (Array.isArray(prop.enum)) {
    input = h('select', aria, required ? null : h('option', {value: ''}, ''),
      prop.enum.map((v, i) => h('option', {value: String(v)}, (prop.enumNames || [])[i] ?? String(v))));
    if (prop.default !== undefined) input.value = String(prop.default);
  } else if (prop.type === 'boolean') {
    input = h('input', {...aria, type: 'checkbox', checked: prop.default === true});
  } else {
    const type = prop.type === 'number' || prop.type === 'integer' ? 'number' : 'text';
    input = h('input', {...aria, type, step: prop.type === 'integer' ? '1' : (type === 'number' ? 'any' : undefined)});
    if (prop.default !== undefined) input.value = String(prop.default);
  }
  const value = () => {
    if (prop.type === 'boolean') return input.checked;
    if (input.value === '') return undefined;
    if (prop.type === 'number' || prop.type === 'integer') return Number(input.value);
    return input.value;
  };
  return {el: h('label.field', h('span', label + (required ? ' *' : '')), input, prop.description ? h('small', prop.description) : null), value};
}

/**
 * elicitationCard draws an elicitation request (an ElicitationRequestEvent)
 * of run runId(); respond, when given, is called with (runId,
 * elicitationId, action, content) and returns a promise.
 */
export function elicitationCard(e, runId, respond) {
  const schema = e.requestedSchema || {};
  const required = new Set(schema.required || []);
  const fields = Object.entries(schema.properties || {}).map(([name, prop]) => [name, field(name, prop || {}, required.has(name))]);
  const state = h('span.status', 'waiting for an answer');
  const buttons = h('span.buttons');
  const form = h('form.fields', {onsubmit: (ev) => ev.preventDefault()}, fields.map(([, f]) => f.el));
  const card = h('div.elicitation', {dataset: {elicitationId: e.elicitationId}},
    h('div', h('strong', 'Input: '), h('code', e.toolName), ' asks'), h('p.message', e.message || ''), form, buttons, state);
  card.settle = () => {
    buttons.replaceChildren();
    form.querySelectorAll('input, select').forEach((i) => { i.disabled = true; });
  };
  // decided shows how the request ended (an ElicitationResultEvent), from
  // whichever client answered or the server's -permission-timeout.
  card.decided = (r) => {
    const action = enumName(r.action, 'ELICITATION_ACTION_') || 'cancel';
    card.dataset.answer = action;
    state.textContent = r.timedOut ? 'cancelled: no one answered in time' : {accept: 'accepted', decline: 'declined', cancel: 'cancelled'}[action] || action;
    card.settle();
  };
  if (respond) {
    const send = async (action) => {
      buttons.querySelectorAll('button').forEach((b) => { b.disabled = true; });
      let content;
      if (action === 'ELICITATION_ACTION_ACCEPT') {
        content = {};
        for (const [name, f] of fields) {
          const v = f.value();
          if (v !== undefined) content[name] = v;
        }
      }
      try {
        await respond(runId(), e.elicitationId, action, content);
      } catch (err) {
        state.textContent = `could not answer: ${err.message}`;
        buttons.querySelectorAll('button').forEach((b) => { b.disabled = false; });
      }
    };
    append(buttons, h('button.accept', {type: 'button', onclick: () => send('ELICITATION_ACTION_ACCEPT')}, 'Submit'), ' ',
      h('button.decline', {type: 'button', onclick: () => send('ELICITATION_ACTION_DECLINE')}, 'Decline'), ' ',
      h('button.cancel', {type: 'button', onclick: () => send('ELICITATION_ACTION_CANCEL')}, 'Cancel'));
  }
  return card;
}
