/**
 * The proof of work after repeated failed sign-ins (issue 16, defect 2): after
 * SIGN_IN_CHALLENGE_AFTER failures of one (address, client address) pair, that pair's sign-ins
 * need a solved ALTCHA challenge, checked before the password. Real requests to a listening
 * server from several loopback client addresses; the challenges are solved here with altcha-lib's
 * own solver, as the browser's widget would.
 */
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { solveChallenge, type Challenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { afterEach, describe, expect, it } from 'vitest';
import { SIGN_IN_CHALLENGE_AFTER } from '../../src/services/people/sessions.service.js';
import { CHALLENGE_TTL_MS } from '../../src/services/people/sign-in-challenge.js';
import { createDashboardHarness, PASSWORD, type DashboardHarness } from '../kit/dashboard-kit.js';

/** scrypt at every attempt: 100-200 ms idle, seconds on a loaded 2-core machine. */
const SLOW = { timeout: 90_000 };
const OWNER = 'owner@example.org';

let h: DashboardHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface Answer {
  status: number;
  json: { error?: string; message?: string } & Record<string, unknown>;
}

/** A request to the listening server from the client address `from`. */
function send(
  port: number,
  from: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        localAddress: from,
        method,
        path: `/dashboard/api/${path}`,
        headers: {
          origin: h!.origin,
          'sec-fetch-site': 'same-origin',
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, json: text === '' ? {} : (JSON.parse(text) as Answer['json']) }),
        );
      },
    );
    req.setTimeout(60_000, () => req.destroy(new Error('no answer in 60 s')));
    req.on('error', reject);
    req.end(payload);
  });
}

async function listening(limit = '10'): Promise<number> {
  h = await createDashboardHarness({ flags: { signInRateLimit: '0', signInFailureLimit: limit } });
  await h.addMember(OWNER, { role: 'owner' });
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  return (h.app.server.address() as AddressInfo).port;
}

const signIn = (port: number, from: string, password: string, altcha?: string) =>
  send(port, from, 'POST', 'session', {
    email: OWNER,
    password,
    ...(altcha === undefined ? {} : { altcha }),
  });

async function fetchChallenge(port: number, from: string): Promise<Challenge> {
  const res = await send(port, from, 'GET', 'session/challenge');
  expect(res.status).toBe(200);
  return res.json as unknown as Challenge;
}

/** The widget's payload: base64 of the challenge and its solution. */
async function solved(challenge: Challenge): Promise<string> {
  const solution = await solveChallenge({ challenge, deriveKey, timeout: 30_000 });
  if (solution === null) throw new Error('the challenge was not solved in 30 s');
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
}

async function failTimes(port: number, from: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) expect((await signIn(port, from, 'a wrong guess')).status).toBe(401);
}

describe('a proof of work after repeated failed sign-ins', SLOW, () => {
  it(`asks for none before ${SIGN_IN_CHALLENGE_AFTER} failures of the pair`, async () => {
    const port = await listening();
    await failTimes(port, '127.0.0.2', SIGN_IN_CHALLENGE_AFTER - 1);
    expect((await signIn(port, '127.0.0.2', PASSWORD)).status).toBe(200);
  });

  it('refuses the right password without a solution with 428 challenge_required, like a wrong one', async () => {
    const port = await listening();
    await failTimes(port, '127.0.0.2', SIGN_IN_CHALLENGE_AFTER);
    const right = await signIn(port, '127.0.0.2', PASSWORD);
    const wrong = await signIn(port, '127.0.0.2', 'another guess');
    expect(right.status).toBe(428);
    expect(right.json.error).toBe('challenge_required');
    expect(wrong).toEqual({ ...right, json: { ...right.json, request_id: wrong.json.request_id } });
  });

  it('signs in with a solved challenge and the right password', async () => {
    const port = await listening();
    await failTimes(port, '127.0.0.2', SIGN_IN_CHALLENGE_AFTER);
    const payload = await solved(await fetchChallenge(port, '127.0.0.2'));
    const res = await signIn(port, '127.0.0.2', PASSWORD, payload);
    expect(res.status).toBe(200);
    // The failures are forgotten with the success: the next sign-in needs no work.
    expect((await signIn(port, '127.0.0.2', PASSWORD)).status).toBe(200);
  });

  it('checks the password once the solution is accepted: a wrong one is 401 and counts', async () => {
    const port = await listening();
    await failTimes(port, '127.0.0.2', SIGN_IN_CHALLENGE_AFTER);
    const res = await signIn(
      port,
      '127.0.0.2',
      'still wrong',
      await solved(await fetchChallenge(port, '127.0.0.2')),
    );
    expect(res.status).toBe(401);
    expect(res.json.error).toBe('invalid_credentials');
  });

  it('accepts a solution once: the same payload again is refused, with the right password too', async () => {
    const port = await listening();
    await failTimes(port, '127.0.0.2', SIGN_IN_CHALLENGE_AFTER);
    const payload = await solved(await fetchChallenge(port, '127.0.0.2'));
    expect((await signIn(port, '127.0.0.2', 'wrong again', payload)).status).toBe(401);
    const again = await signIn(port, '127.0.0.2', PASSWORD, payload);
    expect(again.status).toBe(428);
    expect(again.json).toMatchObject({
      error: 'challenge_required',
      message: expect.stringMatching(/already used/),
    });
  });

  it('refuses a wrong solution, a forged challenge and a payload that is not one', async () => {
    const port = await listening();
    await failTimes(port, '127.0.0.2', SIGN_IN_CHALLENGE_AFTER);
    const challenge = await fetchChallenge(port, '127.0.0.2');
    const good = JSON.parse(Buffer.from(await solved(challenge), 'base64').toString()) as {
      challenge: Challenge;
      solution: { counter: number; derivedKey: string };
    };
    const encode = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
    const wrongKey = { ...good, solution: { ...good.solution, derivedKey: '00'.repeat(32) } };
    // A cheaper challenge of the attacker's own, with the server's signature copied onto it.
    const easier = {
      ...good,
      challenge: { ...good.challenge, parameters: { ...good.challenge.parameters, cost: 1 } },
    };
    for (const altcha of [encode(wrongKey), encode(easier), 'not base64 json', encode({ challenge: 1 })]) {
      const res = await signIn(port, '127.0.0.2', PASSWORD, altcha);
      expect(res.status).toBe(428);
      expect(res.json.message).toMatch(/not valid/);
    }
    // None of them was spent: the good one still signs in.
    expect((await signIn(port, '127.0.0.2', PASSWORD, encode(good))).status).toBe(200);
  });

  it('refuses a solution whose challenge has expired', async () => {
    const port = await listening();
    await failTimes(port, '127.0.0.2', SIGN_IN_CHALLENGE_AFTER);
    const payload = await solved(await fetchChallenge(port, '127.0.0.2'));
    h!.manualClock.advance(CHALLENGE_TTL_MS + 1000);
    const res = await signIn(port, '127.0.0.2', PASSWORD, payload);
    expect(res.status).toBe(428);
    expect(res.json.message).toMatch(/expired/);
  });

  it('leaves another client address of the same person unaffected', async () => {
    const port = await listening();
    await failTimes(port, '127.0.0.2', SIGN_IN_CHALLENGE_AFTER);
    expect((await signIn(port, '127.0.0.2', PASSWORD)).status).toBe(428);
    expect((await signIn(port, '127.0.0.3', PASSWORD)).status).toBe(200);
  });

  it('still ends with 429 at the pair hard limit, without asking for work that cannot help', async () => {
    const port = await listening('5');
    await failTimes(port, '127.0.0.2', SIGN_IN_CHALLENGE_AFTER);
    for (let i = SIGN_IN_CHALLENGE_AFTER; i < 5; i++) {
      const payload = await solved(await fetchChallenge(port, '127.0.0.2'));
      expect((await signIn(port, '127.0.0.2', 'wrong', payload)).status).toBe(401);
    }
    const res = await signIn(port, '127.0.0.2', PASSWORD);
    expect(res.status).toBe(429);
  });

  it('asks the work of a concurrent burst past the threshold too', async () => {
    const port = await listening('8');
    const answers = await Promise.all(Array.from({ length: 8 }, () => signIn(port, '127.0.0.2', 'wrong')));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(SIGN_IN_CHALLENGE_AFTER);
    expect(statuses.filter((s) => s === 428)).toHaveLength(8 - SIGN_IN_CHALLENGE_AFTER);
  });
});
