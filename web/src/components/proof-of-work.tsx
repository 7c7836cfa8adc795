/**
 * The ALTCHA widget (npm `altcha`, self-hosted: no third party is asked anything) that solves the
 * proof of work sign-in asks for after repeated failures (428 `challenge_required`). It fetches
 * its challenge from the dashboard API, solves it at once in Web Workers, and hands the payload
 * to `onSolved`; a new `key` on the component starts it again with a new challenge.
 *
 * Loaded only when a challenge is needed (a dynamic import of this module), so the first page's
 * budget (test/web-budget.test.ts) does not carry it. Under the dashboard's CSP (script-src and
 * style-src 'self', no inline anything): the `external` build has no inline styles or blob:
 * workers; its stylesheet and the SHA worker are bundled by Vite into files of our own origin,
 * which worker-src (falling back to script-src 'self') allows.
 */
import 'altcha/external';
import 'altcha/altcha.css';
import ShaWorker from 'altcha/workers/sha?worker';
import { useEffect, useRef } from 'react';
import { DASHBOARD_API } from '../api/contract';

// The only algorithm the server issues (src/services/sign-in-challenge.ts).
globalThis.$altcha.algorithms.set('SHA-256', () => new ShaWorker());

export const CHALLENGE_URL = `${DASHBOARD_API}/session/challenge`;

export default function ProofOfWork({ onSolved }: { onSolved: (payload: string) => void }) {
  const host = useRef<HTMLDivElement>(null);
  const solved = useRef(onSolved);
  solved.current = onSolved;

  useEffect(() => {
    const widget = document.createElement('altcha-widget');
    widget.setAttribute('challenge', CHALLENGE_URL);
    widget.setAttribute('auto', 'onload');
    widget.setAttribute('name', 'altcha');
    // No human-interaction data is collected, no link to altcha.org shown.
    widget.setAttribute(
      'configuration',
      JSON.stringify({ humanInteractionSignature: false, hideFooter: true }),
    );
    const onVerified = (event: Event) => {
      const payload = (event as CustomEvent<{ payload?: string }>).detail.payload;
      if (payload) solved.current(payload);
    };
    widget.addEventListener('verified', onVerified);
    host.current?.append(widget);
    return () => {
      widget.removeEventListener('verified', onVerified);
      widget.remove();
    };
  }, []);

  return <div ref={host} className="proof-of-work" />;
}
