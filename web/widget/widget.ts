/**
 * mailverdict's signup-form widget (docs/widget.md), served as /widget.js:
 *
 *   <script src="https://verify.example/widget.js" data-key="svc_live_pub_…" defer></script>
 *   <input type="email" name="email" data-mailverdict>
 *
 * Suggests a correction for a mistyped domain while the visitor types (in the browser, with the
 * engine's own suggester), verifies the address on blur with the publishable key, marks the
 * input (`data-mailverdict-status` and a coloured ring), says the verdict in an aria-live region,
 * and blocks the form's submission for the statuses in `data-block`. A submission made before
 * the verdict is in (Enter straight after typing) waits for it, at most `data-submit-wait` ms.
 * Every failure (network, 429, time-out) means no opinion: the form is never blocked by the
 * widget being unable to answer.
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
  disposable: 'This is a disposable address. Please use a permanent one.',
  unknown: '',
  suggest: 'Did you mean {suggestion}?',
  fix: 'Use {suggestion}',
} as const;
type MessageName = keyof typeof MESSAGES;

// The field's own mark, one colour per status (a ring, so that the page's border and focus
// outline stay its own); --mailverdict-mark-width: 0 turns it off.
const STYLE = `
input[data-mailverdict-status]{box-shadow:0 0 0 var(--mailverdict-mark-width,2px) var(--mailverdict-mark-color)}
input[data-mailverdict-status=checking]{--mailverdict-mark-color:var(--mailverdict-color-checking,#0b57d0)}
input[data-mailverdict-status=deliverable]{--mailverdict-mark-color:var(--mailverdict-color-ok,#1b6e20)}
input[data-mailverdict-status=risky]{--mailverdict-mark-color:var(--mailverdict-color-warning,#7a4a00)}
input[data-mailverdict-status=undeliverable]{--mailverdict-mark-color:var(--mailverdict-color-error,#b00020)}
input[data-mailverdict-status=unknown]{--mailverdict-mark-color:var(--mailverdict-color-unknown,#6b6b6b)}
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

/** What the form's submit handler needs of each attached input. */
interface Gate {
  input: HTMLInputElement;
  /** A verdict for the current value blocks the submission. */
  blocked(): boolean;
  /** The current value still needs a verdict (not asked yet, or in flight). */
  undecided(): boolean;
  /** Verifies now (or joins the request in flight), resolved at the latest after `data-submit-wait`. */
  settle(): Promise<void>;
  /** Says why the submission was refused and puts the focus back in the field. */
  refuse(): void;
}

const gates = new Set<Gate>();
/** Forms whose submission waits for a verdict, with the button that submitted them. */
const waiting = new WeakMap<HTMLFormElement, HTMLElement | null>();
/** Forms being submitted again by the widget after their verdicts came in. */
const released = new WeakSet<HTMLFormElement>();

function gatesOf(form: HTMLFormElement): Gate[] {
  const found: Gate[] = [];
  for (const gate of gates) {
    if (!gate.input.isConnected) gates.delete(gate);
    else if (gate.input.form === form) found.push(gate);
  }
  return found;
}

/** Submits `form` again as `submitter` did, through the page's own handlers this time. */
function resubmit(form: HTMLFormElement, submitter: HTMLElement | null): void {
  released.add(form);
  try {
    if (typeof form.requestSubmit !== 'function') form.submit();
    else if (submitter?.isConnected && (submitter as HTMLButtonElement).form === form)
      form.requestSubmit(submitter);
    else form.requestSubmit();
  } finally {
    released.delete(form);
  }
}

/**
 * Every submission of a form with an attached input, before the page's own handlers (React's
 * onSubmit among them) see it: a blocking verdict cancels it; a value with no verdict yet (Enter
 * or a click straight after typing) holds it until the verdict comes or the wait ends, then it
 * is submitted again unless the verdict blocks. A wait that ends with no verdict never blocks.
 */
function onSubmit(event: SubmitEvent): void {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || released.has(form)) return;
  const mine = gatesOf(form);
  const stop = (): void => {
    event.preventDefault();
    event.stopImmediatePropagation();
  };
  const refusing = mine.find((gate) => gate.blocked());
  if (refusing) {
    stop();
    refusing.refuse();
    return;
  }
  const pending = mine.filter((gate) => gate.undecided());
  if (pending.length === 0) return;
  stop();
  const already = waiting.has(form);
  waiting.set(form, event.submitter);
  if (already) return;
  void Promise.all(pending.map((gate) => gate.settle())).then(() => {
    const submitter = waiting.get(form) ?? null;
    waiting.delete(form);
    const refused = gatesOf(form).find((gate) => gate.blocked());
    if (refused) refused.refuse();
    else resubmit(form, submitter);
  });
}

let originReported = false;

/**
 * A fetch that failed without an answer is a network error or a CORS refusal, which a page cannot
 * tell apart. If the widget's own file (served to every origin) answers, the server is up, so the
 * verification was refused for this page's origin: say so once, in words a developer can act on.
 */
async function reportRefusedOrigin(scriptUrl: string, key: string): Promise<void> {
  if (originReported) return;
  originReported = true;
  try {
    const res = await fetch(scriptUrl, { method: 'HEAD', credentials: 'omit', cache: 'no-store' });
    if (!res.ok) return;
  } catch {
    return;
  }
  const origin = location.origin;
  console.error(
    `mailverdict widget: ${new URL(scriptUrl).origin} refused verifications from this page's origin ${origin}. ` +
      `Add ${origin} to the allowed origins of the publishable key ${key.slice(0, 17)}… ` +
      `(dashboard: API keys; command line: keys create --publishable --allowed-origin ${origin}). ` +
      'Until then the widget gives no opinion and never blocks the form.',
  );
}

/** Sets an input's value the way typing does, so that frameworks (React) see the change. */
function setValue(input: HTMLInputElement, value: string): void {
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set?.call(input, value);
  input.dispatchEvent(new Event('input', { bubbles: true }));
  input.dispatchEvent(new Event('change', { bubbles: true }));
}

function attach(input: HTMLInputElement, scriptUrl: string, endpoint: string, key: string): void {
  if (input.dataset.mailverdictReady !== undefined) return;
  input.dataset.mailverdictReady = '';
  const attr = (name: string): string | undefined =>
    input.getAttribute(name) ?? script?.getAttribute(name) ?? undefined;
  const message = (name: MessageName, suggestion = ''): string =>
    // A function, so that `$&`, `$'` or `` $` `` in an address are not replacement patterns.
    (attr(`data-msg-${name}`) ?? MESSAGES[name]).replace('{suggestion}', () => suggestion);
  const number = (name: string, fallback: number): number => {
    const n = Number(attr(name));
    return Number.isFinite(n) && n >= 0 && attr(name) !== undefined ? n : fallback;
  };
  const debounceMs = number('data-debounce', 300);
  const timeoutMs = number('data-timeout', 10_000);
  const submitWaitMs = number('data-submit-wait', 3000);
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
  /** The verification running now, and the value it is for. */
  let running: { value: string; done: Promise<void> } | null = null;
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
    // A disposable address receives mail: saying it "may not" would be wrong, so it says why.
    const text =
      verdict.disposable && verdict.status !== 'undeliverable'
        ? message('disposable')
        : message(verdict.status);
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
    let refused = false;
    try {
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: value }),
        signal: controller.signal,
        credentials: 'omit',
      });
      if (res.ok) answer = (await res.json()) as Verdict;
    } catch (error) {
      // A network error, a CORS refusal or a time-out: no opinion.
      refused = !controller.signal.aborted && error instanceof TypeError;
    } finally {
      clearTimeout(timeout);
    }
    // Cancelled by a newer value (a time-out leaves it in flight: it ends as no opinion).
    if (inFlight !== controller) return;
    inFlight = null;
    if (refused) void reportRefusedOrigin(scriptUrl, key);
    // Anything but an answer (429, 5xx, time-out) is `unknown`, which never blocks.
    verdict = answer ?? { status: 'unknown', disposable: false, did_you_mean: null };
    verifiedValue = value;
    setStatus(verdict.status);
    show();
    input.dispatchEvent(new CustomEvent('mailverdict:result', { bubbles: true, detail: { ...verdict } }));
  };

  const check = (): Promise<void> => {
    const value = input.value.trim();
    if (running?.value === value && inFlight !== null) return running.done;
    const done = verify();
    running = { value, done };
    return done;
  };

  const schedule = (delay: number): void => {
    clearTimeout(timer);
    timer = setTimeout(() => void check(), delay);
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

  gates.add({
    input,
    blocked,
    undecided: () => {
      const value = input.value.trim();
      return value !== '' && input.checkValidity() && !(verdict !== null && verifiedValue === value);
    },
    settle: () => {
      clearTimeout(timer);
      return new Promise<void>((resolve) => {
        const wait = setTimeout(resolve, submitWaitMs);
        void check().finally(() => {
          clearTimeout(wait);
          resolve();
        });
      });
    },
    refuse: () => {
      show();
      input.focus();
    },
  });
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
  // Capture at the document: before any handler of the form itself or of a framework's root.
  document.addEventListener('submit', onSubmit, true);
  const scan = (root: ParentNode): void =>
    root.querySelectorAll<HTMLInputElement>('input[type=email][data-mailverdict]').forEach((input) => {
      attach(input, script.src, endpoint, key);
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
