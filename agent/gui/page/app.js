// The interpreter's web page: a view of the session the terminal shows, fed by /api/events (server-sent events,
// agent/gui/gui_display.h lists them) and driving it through /api/message, /api/answer, /api/stop and /api/resume.
// Everything that came from the model or the sandbox is put in the page as text; the model's prose is markdown,
// rendered by Debian's marked with raw HTML escaped and only http(s) and mailto links (the server's CSP forbids
// inline script besides).
'use strict';

const $ = (id) => document.getElementById(id);
const conv = $('conversation');
const state = {
  assistant: null,     // the assistant message being streamed: {el, text}
  blocks: new Map(),   // block number -> its elements
  asks: new Map(),     // question id -> its card
  confirming: null,    // the code the next "Run this code?" is about: {language, code} of the confirmation event
  busy: false,
  denied: 0,
  renderPending: false,
};
// For the tests and bench/gui: when each event arrived, and how long after the agent published it.
window.oishellPage = { events: 0, lastSeq: 0, latencies: [] };

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

// Characters drawn as nothing, or that reorder the text around them (base/hidden_characters.h): zero-width ones,
// bidi controls, fillers, variation selectors, tags. Shown as "<U+200B>" in the code, the output, the model's text,
// notices and questions, as on the terminal: `cd ./build<U+200B>-cache` read as `cd ./build-cache`, and bidi
// controls showed a call inside a docstring that ran (issue 34).
const HIDDEN = /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}]/gu;
function visible(s) {
  return String(s).replace(HIDDEN, (c) => '<U+' + c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0') + '>');
}

// Terminal control sequences in a block's output are not text: dropped (colours, cursor moves, titles).
function stripTerminal(s) {
  return s.replace(/\x1b\][^\x07\x1b]*(\x07|\x1b\\)?/g, '')
    .replace(/\x1b\[[0-?]*[ -\/]*[@-~]/g, '')
    .replace(/\x1b[@-Z\\-_]/g, '')
    .replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, '');
}

function highlighted(code, language) {
  code = visible(code);
  if (window.hljs) {
    try {
      if (language && hljs.getLanguage(language)) return hljs.highlight(language, code, true).value;
      return hljs.highlightAuto(code).value;
    } catch (e) { /* shown plain */ }
  }
  return escapeHtml(code);
}

if (window.marked) {
  marked.setOptions({ gfm: true, breaks: false, highlight: (code, lang) => highlighted(code, lang) });
  marked.use({
    renderer: {
      html(html) { return escapeHtml(html); },
      link(href, title, text) {
        if (!/^(https?:|mailto:)/i.test(href || '')) return text;
        return '<a href="' + escapeHtml(href) + '" rel="noopener noreferrer" target="_blank">' + text + '</a>';
      },
      image(href, title, text) { return escapeHtml(text || href || ''); },
    },
  });
}

function markdown(text) {
  text = visible(text);
  if (!window.marked) return escapeHtml(text).replace(/\n/g, '<br>');
  try { return marked.parse(text); } catch (e) { return escapeHtml(text); }
}

function atBottom() { return conv.scrollHeight - conv.scrollTop - conv.clientHeight < 80; }
function add(node) {
  const stick = atBottom();
  conv.appendChild(node);
  if (stick) conv.scrollTop = conv.scrollHeight;
  return node;
}

// The message being streamed is rendered at most once a frame, and once more when it ends.
function renderAssistant() {
  state.renderPending = false;
  if (!state.assistant) return;
  const stick = atBottom();
  state.assistant.el.innerHTML = markdown(state.assistant.text);
  if (stick) conv.scrollTop = conv.scrollHeight;
}

function endAssistant() {
  if (state.renderPending) renderAssistant();
  state.assistant = null;
}

function assistantDelta(text) {
  if (!state.assistant) state.assistant = { el: add(el('div', 'msg assistant')), text: '' };
  state.assistant.text += text;
  if (!state.renderPending) {
    state.renderPending = true;
    requestAnimationFrame(renderAssistant);
  }
}

function block(n, language) {
  let b = state.blocks.get(n);
  if (b) return b;
  endAssistant();
  b = { root: add(el('div', 'block')), code: '', language: language || '' };
  b.root.dataset.block = n;
  b.lang = b.root.appendChild(el('div', 'lang', language || 'command'));
  b.pre = b.root.appendChild(el('pre'));
  b.codeEl = b.pre.appendChild(el('code'));
  b.output = b.root.appendChild(el('pre', 'output'));
  state.blocks.set(n, b);
  return b;
}

function showCode(b) {
  b.codeEl.innerHTML = highlighted(b.code, b.language);
}

function appendOutput(b, text) {
  const stick = b.output.scrollHeight - b.output.scrollTop - b.output.clientHeight < 40;
  b.output.appendChild(document.createTextNode(visible(stripTerminal(text))));
  if (stick) b.output.scrollTop = b.output.scrollHeight;
  if (atBottom()) conv.scrollTop = conv.scrollHeight;
}

function showResult(b, result) {
  const status = result.status || 'ok';
  const code = result.exit_code;
  const failed = status !== 'ok' || (code !== undefined && code !== 0);
  let text = failed ? (status !== 'ok' ? status : 'exit code ' + code) : 'done';
  if (result.duration_ms !== undefined) text += ' · ' + (result.duration_ms / 1000).toFixed(2) + ' s';
  b.root.appendChild(el('div', 'result' + (failed ? ' failed' : ''), text));
}

function diffView(text) {
  const pre = el('pre', 'diff');
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  for (const line of lines) {
    let cls = '';
    if (line.startsWith('+++') || line.startsWith('---')) cls = '';
    else if (line.startsWith('+')) cls = 'add';
    else if (line.startsWith('-')) cls = 'del';
    else if (line.startsWith('@@')) cls = 'hunk';
    const span = el('span', cls, visible(line) + '\n');
    pre.appendChild(span);
  }
  return pre;
}

function showChanges(b, ev) {
  const box = el('details', 'changes');
  const n = ev.files.length;
  box.appendChild(el('summary', '', 'What changed: ' + n + (n === 1 ? ' file' : ' files') +
    (ev.incomplete ? ' (not all compared: ' + ev.incomplete + ')' : '')));
  for (const f of ev.files) {
    const file = box.appendChild(el('div', 'file'));
    file.appendChild(el('div', '', visible(f.summary)));
    if (f.diff && !f.binary && !f.too_large) file.appendChild(diffView(f.diff));
  }
  b.root.appendChild(box);
}

function notice(level, text) {
  endAssistant();
  add(el('div', 'notice ' + level, visible(text)));
}

function showAsk(ev) {
  endAssistant();
  const card = add(el('div', 'ask'));
  card.dataset.ask = ev.id;
  card.options = ev.options;
  card.appendChild(el('div', 'question', visible(ev.question.trim())));
  // The run question shows again the exact language and code that will run (the parsed call, as the confirmation
  // event carried it), in the card itself: not only in a block further up, which another call's block may follow.
  if (ev.question.trim() === 'Run this code?' && state.confirming) {
    card.appendChild(el('div', 'ask-language', state.confirming.language || 'command'));
    const pre = card.appendChild(el('pre', 'ask-code'));
    pre.appendChild(el('code')).innerHTML = highlighted(state.confirming.code, state.confirming.language);
    state.confirming = null;
  }
  const controls = card.appendChild(el('div', 'controls'));
  const send = (answer) => {
    for (const b of controls.querySelectorAll('button, input')) b.disabled = true;
    post('/api/answer', { id: ev.id, answer });
  };
  if (ev.options.length) {
    ev.options.forEach((o, i) => {
      const button = controls.appendChild(el('button', i === 0 ? 'primary' : '', o.label));
      button.type = 'button';
      button.dataset.answer = o.answer;
      button.addEventListener('click', () => send(o.answer));
    });
  } else {
    const input = controls.appendChild(el('input'));
    const button = controls.appendChild(el('button', 'primary', 'Answer'));
    button.addEventListener('click', () => send(input.value));
    input.addEventListener('keydown', (e) => { if (e.key === 'Enter') send(input.value); });
  }
  state.asks.set(ev.id, card);
}

function askDone(ev) {
  const card = state.asks.get(ev.id);
  if (!card) return;
  card.querySelector('.controls').remove();
  const chosen = (card.options || []).find((o) => o.answer === ev.answer);
  const what = ev.answer === null ? 'Stopped' : chosen ? chosen.label : 'Answered ' + JSON.stringify(ev.answer);
  card.appendChild(el('div', 'done', what + (ev.by === 'page' ? ' (answered here)' : ' (answered at the terminal)')));
  state.asks.delete(ev.id);
}

function setBusy(busy) {
  state.busy = busy;
  $('busy').hidden = !busy;
  $('stop').disabled = !busy;
  if (!busy) endAssistant();
}

function denial(event) {
  const name = event.event || 'denied';
  const what = event.host ? event.host + (event.port ? ':' + event.port : '') : (event.path || event.syscall || event.message || '');
  const item = el('li', '', visible(name + (what ? ': ' + what : '') + (event.reason ? ' (' + event.reason + ')' : '')));
  $('denials').prepend(item);
  $('denied-count').textContent = String(++state.denied);
}

function replay(messages) {
  conv.textContent = '';
  state.blocks.clear();
  state.assistant = null;
  let n = 0;
  let current = null;
  for (const m of messages) {
    if (m.role === 'user' && m.type === 'message') {
      add(el('div', 'msg user', m.content));
      current = null;
    } else if (m.role === 'assistant' && m.type === 'message') {
      add(el('div', 'msg assistant')).innerHTML = markdown(m.content);
      current = null;
    } else if (m.role === 'assistant' && m.type === 'code') {
      current = block('r' + (++n), m.format);
      current.code = m.content;
      showCode(current);
    } else if (m.role === 'computer' && m.type === 'console' && current) {
      appendOutput(current, m.content);
    } else if (m.role === 'computer' && m.type === 'image' && current) {
      const fmt = (m.format || '').replace(/^base64\./, '');
      if (/^(png|jpeg|jpg|gif|webp)$/.test(fmt)) {
        const img = current.root.appendChild(el('img'));
        img.src = 'data:image/' + fmt + ';base64,' + m.content;
      }
    }
  }
  state.blocks.clear();
}

function showStatus(ev) {
  const parts = [];
  if (ev.model) parts.push(ev.model);
  if (ev.sandbox) parts.push(ev.sandbox);
  if (ev.auto_run !== undefined) parts.push('auto_run ' + (ev.auto_run ? 'on' : 'off'));
  $('status').textContent = parts.join(' · ');
  $('sandbox').textContent = ev.sandbox || '';
  $('policy').textContent = ev.policy || '';
}

const handlers = {
  user: (ev) => { endAssistant(); add(el('div', 'msg user', ev.text)); },
  waiting: (ev) => {
    const w = document.querySelector('.waiting');
    if (ev.on && !w) add(el('div', 'waiting', 'waiting for the model...'));
    if (!ev.on && w) w.remove();
  },
  message_delta: (ev) => assistantDelta(ev.text),
  code_begin: (ev) => { block(ev.block, ev.language); },
  code_delta: (ev) => {
    const b = block(ev.block);
    b.code += ev.text;
    b.codeEl.textContent = visible(b.code);
  },
  code_end: (ev) => showCode(block(ev.block)),
  answer_end: () => endAssistant(),
  console_begin: (ev) => { block(ev.block).root.classList.add('running'); },
  output: (ev) => appendOutput(block(ev.block), ev.text),
  output_cut: (ev) => appendOutput(block(ev.block), '\n[output past ' + ev.shown_bytes + ' bytes is not shown here; the terminal has it all]\n'),
  image: (ev) => {
    if (!/^(png|jpeg|jpg|gif|webp)$/.test(ev.format)) return;
    const b = block(ev.block);
    const img = b.root.appendChild(el('img'));
    img.src = 'data:image/' + ev.format + ';base64,' + ev.base64;
    // A computer action's screenshot (--os) is also the live screen beside the conversation, with the action.
    if (b.language === 'computer') {
      $('screen').src = img.src;
      $('screen-action').textContent = 'after ' + b.code;
      $('screen-section').hidden = false;
    }
  },
  console_end: (ev) => {
    const b = block(ev.block);
    b.root.classList.remove('running');
    showResult(b, ev.result || {});
  },
  changes: (ev) => showChanges(block(ev.block), ev),
  confirmation: (ev) => {
    const b = block(ev.block, ev.language);
    b.code = ev.code;
    b.language = ev.language;
    b.lang.textContent = ev.language || 'command';
    showCode(b);
    state.confirming = { language: ev.language, code: ev.code };
  },
  notice: (ev) => notice(ev.level, ev.text),
  host_changes: (ev) => {
    for (const c of ev.changes) {
      add(el('div', 'host-change', visible('sandbox: ' + c.path + (c.found ? ' — ' + c.found : '') + (c.action ? ' (' + c.action + ')' : ''))));
    }
  },
  sandbox_event: (ev) => {
    const name = (ev.event && ev.event.event) || '';
    if (name === 'denied' || name.endsWith('.denied')) denial(ev.event);
  },
  conversation: (ev) => replay(ev.messages),
  ask: showAsk,
  ask_done: askDone,
  state: (ev) => { setBusy(ev.busy); if (!ev.busy) loadConversations(); },
  status: showStatus,
};

// The session's token: in the address's fragment the first time (no request sends a fragment), then in this tab's
// sessionStorage (this origin's alone); the fragment is taken off the address at once. Every API call sends it.
const token = (() => {
  const m = location.hash.match(/token=([0-9a-f]{16,})/);
  if (m) {
    sessionStorage.setItem('oishell-token', m[1]);
    history.replaceState(null, '', location.pathname);
  }
  return sessionStorage.getItem('oishell-token');
})();
const authorization = { Authorization: 'Bearer ' + token };

function ended(text) {
  $('status').textContent = text;
  setBusy(false);
  $('send').disabled = true;
}

function onEvent(data) {
  let ev;
  try { ev = JSON.parse(data); } catch (err) { return; }
  window.oishellPage.events++;
  window.oishellPage.lastSeq = ev.seq;
  // Latency counts live events only: those published before this page connected are a replay.
  if (ev.type === 'message_delta' && ev.t >= window.oishellPage.connectedAt) window.oishellPage.latencies.push(Date.now() - ev.t);
  const h = handlers[ev.type];
  if (h) h(ev);
}

// The session's events: server-sent events read with fetch (which, unlike EventSource, sends the token in a
// header), resumed after the last one seen when the stream breaks.
async function connect() {
  if (!token) {
    ended('no token');
    notice('error', 'Open the address interpreter --gui printed: it ends with #token=..., which lets this page in.');
    return;
  }
  window.oishellPage.connectedAt = Date.now();
  let last = 0;
  for (let attempt = 0; attempt < 3; attempt++) {
    let response;
    try {
      response = await fetch('/api/events', { headers: { ...authorization, 'Last-Event-ID': String(last) }, cache: 'no-store' });
    } catch (e) {
      await new Promise((r) => setTimeout(r, 500));
      continue;  // the agent is gone, or restarting its listener: tried again, then the session is over
    }
    if (response.status === 403) {
      ended('not allowed');
      notice('error', 'The agent refused this page: open the address interpreter --gui printed (its token is new each session).');
      return;
    }
    if (!response.ok) break;
    attempt = 0;
    if ($('status').textContent === 'connecting...') $('status').textContent = 'connected';
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id = null, kind = 'message', data = '';
          for (const line of frame.split('\n')) {
            if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('event: ')) kind = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (kind === 'missed') {
            notice('warning', data + ' earlier events were not kept (the session is long); what follows is complete.');
          } else if (data) {
            if (id) last = Number(id);
            onEvent(data);
          }
        }
      }
    } catch (e) { /* the stream broke: resumed below */ }
  }
  ended('the session has ended');
}

async function post(path, body) {
  try {
    const r = await fetch(path, { method: 'POST', headers: { ...authorization, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    if (!r.ok) {
      const detail = await r.json().catch(() => ({}));
      notice('error', path + ': ' + (detail.detail || r.status));
    }
    return r.ok;
  } catch (e) {
    notice('error', path + ': the agent is not reachable (' + e.message + ')');
    return false;
  }
}

async function loadConversations() {
  try {
    if (!token) return;
    const r = await fetch('/api/conversations', { headers: authorization });
    if (!r.ok) return;
    const list = (await r.json()).conversations || [];
    const ol = $('conversations');
    ol.textContent = '';
    if (!list.length) ol.appendChild(el('li', 'muted', 'none saved yet'));
    for (const c of list.slice(0, 50)) {
      const li = ol.appendChild(el('li'));
      const title = li.appendChild(el('span', '', c.title));
      title.title = c.name;
      const b = li.appendChild(el('button', '', 'Resume'));
      b.type = 'button';
      b.dataset.name = c.name;
      b.addEventListener('click', () => post('/api/resume', { name: c.name }));
    }
  } catch (e) { /* the list waits for the next prompt */ }
}

function send() {
  const input = $('input');
  const text = input.value;
  if (!text.trim()) return;
  input.value = '';
  post('/api/message', { text });
}

$('send').addEventListener('click', send);
$('input').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send();
  }
});
$('stop').addEventListener('click', () => post('/api/stop', {}));
// The session is fetched once the page has painted: its events never hold back the first frame.
requestAnimationFrame(() => setTimeout(() => {
  connect();
  loadConversations();
}, 0));

// highlight.js is large (850 KB): loaded after the page is up, so that it never delays the first paint; what was
// shown before it came is highlighted then.
window.addEventListener('load', () => {
  const script = document.createElement('script');
  script.src = '/vendor/highlight.js';
  script.onload = () => {
    const highlight = hljs.highlightElement || hljs.highlightBlock;
    for (const code of document.querySelectorAll('pre code:not(.hljs)')) {
      if (code.querySelector('span')) continue;  // already highlighted
      try { highlight.call(hljs, code); } catch (e) { /* stays plain */ }
    }
  };
  document.head.appendChild(script);
});
