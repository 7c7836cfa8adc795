/**
 * mailverdict's signup-form widget (docs/widget.md), served as /widget.js:
 *
 *   <script src="https://verify.example/widget.js" data-key="svc_live_pub_…" defer></script>
 *   <input type="email" name="email" data-mailverdict>
 *
 * Suggests a correction for a mistyped domain while the visitor types (in the browser, with the
 * engine's own suggester), verifies the address on blur with the publishable key, marks the
 * input (`data-mailverdict-status`), says the verdict in an aria-live region, and blocks the
 * form's submission for the statuses in `data-block`. Every failure (network, 429, time-out)
 * means no opinion: the form is never blocked by the widget being unable to answer.
 *
 * It talks to one host only: the one it was loaded from (the script's own src).
 */
import { suggestCorrection } from '../../src/engine/lists/typo.js';

type Status = 'checking' | 'deliverable' | 'risky' | 'undeliverable' | 'unknown';

interface Verdict {
  status: Exclude<Status, 'checking'>;
  disposable: boolean;
  did_you_mean: string | null;
}

/** Messages, each replaceable by a `data-msg-*` attribute on the input or the script tag. */
const MESSAGES = {
  checking: 'Checking the address…',
  deliverable: '',
  risky: 'This address may not receive mail.',
  undeliverable: 'This address cannot receive mail.',
  disposable: 'Please use a permanent address, not a disposable one.',
  unknown: '',
  suggest: 'Did you mean {suggestion}?',
  fix: 'Use {suggestion}',
} as const;
type MessageName = keyof typeof MESSAGES;

const STYLE = `
.mailverdict-message{display:block;min-height:1.2em;margin-top:var(--mailverdict-gap,.25rem);font-size:var(--mailverdict-font-size,.875em);color:var(--mailverdict-color,inherit)}
.mailverdict-message[data-status=deliverable]{color:var(--mailverdict-color-ok,#1b6e20)}
.mailverdict-message[data-status=risky]{color:var(--mailverdict-color-warning,#7a4a00)}
.mailverdict-message[data-status=undeliverable],.mailverdict-message[data-status=blocked]{color:var(--mailverdict-color-error,#b00020)}
.mailverdict-suggestion{font:inherit;color:var(--mailverdict-link-color,#0b57d0);background:none;border:0;padding:0;margin:0;text-decoration:underline;cursor:pointer}
.mailverdict-suggestion:focus-visible{outline:2px solid var(--mailverdict-focus-color,#0b57d0);outline-offset:2px}
`;

const script = document.currentScript as HTMLScriptElement | null;

function installStyle(): void {
  // A constructed sheet needs no 'unsafe-inline' in the page's CSP; a <style> is the fallback.
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(STYLE);
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  } catch {
    const style = document.createElement('style');
    style.textContent = STYLE;
    document.head.append(style);
  }
}

let ids = 0;

/** Sets an input's value the way typing does, so that frameworks (React) see the change. */
function setValue(input: HTMLInputElement, value: string): void {
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set?.call(input, value);
  input.dispatchEvent(new Event('input', { bubbles: true }));
  input.dispatchEvent(new Event('change', { bubbles: true }));
}

function attach(input: HTMLInputElement, endpoint: string, key: string): void {
  if (input.dataset.mailverdictReady !== undefined) return;
  input.dataset.mailverdictReady = '';
  const attr = (name: string): string | undefined =>
    input.getAttribute(name) ?? script?.getAttribute(name) ?? undefined;
  const message = (name: MessageName, suggestion = ''): string =>
    (attr(`data-msg-${name}`) ?? MESSAGES[name]).replace('{suggestion}', suggestion);
  const number = (name: string, fallback: number): number => {
    const n = Number(attr(name));
    return Number.isFinite(n) && n >= 0 && attr(name) !== undefined ? n : fallback;
  };
  const debounceMs = number('data-debounce', 300);
  const timeoutMs = number('data-timeout', 10_000);
  const blocking = new Set((attr('data-block') ?? 'undeliverable').split(/[\s,]+/).filter(Boolean));

  // The region the verdict is said in: the page's own (data-mailverdict-message) or one of ours.
  const named = input.getAttribute('data-mailverdict-message');
  let region = named ? document.getElementById(named) : null;
  if (!region) {
    region = document.createElement('span');
    region.id = `mailverdict-message-${++ids}`;
    region.className = 'mailverdict-message';
    input.insertAdjacentElement('afterend', region);
  }
  if (!region.hasAttribute('aria-live')) region.setAttribute('aria-live', 'polite');
  const described = input.getAttribute('aria-describedby')?.split(/\s+/) ?? [];
  if (!described.includes(region.id))
    input.setAttribute('aria-describedby', [...described, region.id].join(' '));

  let verdict: Verdict | null = null;
  let verifiedValue = '';
  let inFlight: AbortController | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;

  // One button per input, reused: a verdict arriving between the press and the release of the
  // mouse must not replace the element being clicked.
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'mailverdict-suggestion';
  button.addEventListener('click', () => {
    const suggestion = button.textContent ?? '';
    setValue(input, suggestion);
    input.focus();
    schedule(0);
  });

  const say = (text: string, status: string, suggestion: string | null = null): void => {
    region.dataset.status = status;
    if (suggestion === null) {
      region.textContent = text;
      return;
    }
    // "Did you mean <button>anna@gmail.com</button>?": the button puts it in the field.
    const [before = '', after = ''] = message('suggest', '\u0000').split('\u0000');
    button.textContent = suggestion;
    button.setAttribute('aria-label', message('fix', suggestion));
    region.replaceChildren(before, button, after, text === '' ? '' : ` ${text}`);
  };

  const blocked = (): boolean =>
    verdict !== null &&
    verifiedValue === input.value.trim() &&
    (blocking.has(verdict.status) || (verdict.disposable && blocking.has('disposable')));

  const setStatus = (status: Status | null): void => {
    if (status === null) input.removeAttribute('data-mailverdict-status');
    else input.setAttribute('data-mailverdict-status', status);
    if (blocked()) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  };

  const localSuggestion = (value: string): string | null => {
    const at = value.lastIndexOf('@');
    if (at <= 0 || at === value.length - 1) return null;
    return suggestCorrection(value.slice(0, at), value.slice(at + 1).toLowerCase());
  };

  const show = (): void => {
    const value = input.value.trim();
    const suggestion = localSuggestion(value) ?? (verdict?.did_you_mean || null);
    if (verdict === null || verifiedValue !== value) {
      say('', '', suggestion);
      return;
    }
    const text =
      verdict.disposable && blocking.has('disposable') ? message('disposable') : message(verdict.status);
    say(text, blocked() ? 'blocked' : verdict.status, suggestion);
  };

  const verify = async (): Promise<void> => {
    const value = input.value.trim();
    if (value === verifiedValue && verdict !== null) return;
    inFlight?.abort();
    verdict = null;
    if (value === '' || !input.checkValidity()) {
      setStatus(null);
      show();
      return;
    }
    const controller = new AbortController();
    inFlight = controller;
    const timeout = setTimeout(() => controller.abort(), timeoutMs);
    setStatus('checking');
    say(message('checking'), 'checking', localSuggestion(value));
    let answer: Verdict | null = null;
    try {
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: value }),
        signal: controller.signal,
        credentials: 'omit',
      });
      if (res.ok) answer = (await res.json()) as Verdict;
    } catch {
      // A network error or a time-out: no opinion.
    } finally {
      clearTimeout(timeout);
    }
    // Cancelled by a newer value (a time-out leaves it in flight: it ends as no opinion).
    if (inFlight !== controller) return;
    inFlight = null;
    // Anything but an answer (429, 5xx, time-out) is `unknown`, which never blocks.
    verdict = answer ?? { status: 'unknown', disposable: false, did_you_mean: null };
    verifiedValue = value;
    setStatus(verdict.status);
    show();
    input.dispatchEvent(new CustomEvent('mailverdict:result', { bubbles: true, detail: { ...verdict } }));
  };

  const schedule = (delay: number): void => {
    clearTimeout(timer);
    timer = setTimeout(() => void verify(), delay);
  };

  input.addEventListener('input', () => {
    // A changed value cancels the verification of the old one.
    clearTimeout(timer);
    if (inFlight) {
      inFlight.abort();
      inFlight = null;
    }
    if (input.value.trim() !== verifiedValue) {
      verdict = null;
      setStatus(null);
    }
    show();
  });
  input.addEventListener('blur', () => schedule(debounceMs));

  const form = input.form;
  form?.addEventListener(
    'submit',
    (event) => {
      if (!blocked()) return;
      // Before the page's own handlers (React's onSubmit among them) see it.
      event.preventDefault();
      event.stopImmediatePropagation();
      show();
      input.focus();
    },
    true,
  );
}

function start(): void {
  if (!script) return;
  const key = script.dataset.key;
  if (!key) {
    console.warn('mailverdict widget: the script tag has no data-key');
    return;
  }
  const endpoint = new URL('v1/verify', new URL('.', script.src)).href;
  installStyle();
  const scan = (root: ParentNode): void =>
    root.querySelectorAll<HTMLInputElement>('input[type=email][data-mailverdict]').forEach((input) => {
      attach(input, endpoint, key);
    });
  scan(document);
  // Inputs rendered later (React, a dialog) are attached when they appear.
  new MutationObserver(() => scan(document)).observe(document.documentElement, {
    childList: true,
    subtree: true,
  });
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
