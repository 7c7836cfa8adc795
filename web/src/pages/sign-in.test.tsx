import { screen, waitFor } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { SignInBody } from '../api/contract';
import { FakeServer, failure, ok, session } from '../test/fake-server';
import { renderApp } from '../test/render';
import { safeNext } from './sign-in';

// The widget itself is ALTCHA's (driven in Chromium by test/e2e/sign-in-challenge.test.ts): here a
// stand-in whose button "solves" with a payload of its own (a new one at each render).
let rounds = 0;
vi.mock('../components/proof-of-work', () => ({
  default: ({ onSolved }: { onSolved: (payload: string) => void }) => {
    const round = ++rounds;
    return (
      <button type="button" onClick={() => onSolved(`payload-${round}`)}>
        Solve the puzzle
      </button>
    );
  },
}));

const REQUIRED = failure(428, 'challenge_required', 'solve the proof-of-work challenge to sign in');

function server(answer: (body: SignInBody) => ReturnType<typeof ok>) {
  let signedIn = false;
  return new FakeServer({
    'GET /session': () =>
      signedIn ? ok(session()) : failure(401, 'unauthenticated', 'sign in to use the dashboard'),
    'POST /session': (call) => {
      const reply = answer(call.body as SignInBody);
      if (reply.status === 200) signedIn = true;
      return reply;
    },
    'GET /overview': failure(500, 'internal_error', 'not needed here'),
  });
}

describe('the proof of work at sign-in', () => {
  it('shows no puzzle until the server asks, then sends the attempt again with the solution', async () => {
    const fake = server((body) =>
      body.altcha === undefined
        ? REQUIRED
        : body.password === 'the password'
          ? ok(session())
          : failure(401, 'invalid_credentials', 'the e-mail address or the password is not correct'),
    );
    const { user, at } = renderApp('/sign-in', fake);
    await user.type(await screen.findByLabelText('E-mail'), 'owner@example.com');
    await user.type(screen.getByLabelText('Password'), 'the password');
    expect(screen.queryByRole('button', { name: 'Solve the puzzle' })).not.toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Sign in' }));

    // Waiting for the solution: said in words, and the 428 is not shown as an error.
    expect(await screen.findByRole('status')).toHaveTextContent(/proof-of-work puzzle/);
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Signing in…' })).toBeDisabled();
    await user.click(await screen.findByRole('button', { name: 'Solve the puzzle' }));

    await waitFor(() => expect(at()).toBe('/'));
    const sent = fake.callsTo('POST', '/session').map((call) => call.body as SignInBody);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toEqual({ email: 'owner@example.com', password: 'the password' });
    expect(sent[1]).toMatchObject({ email: 'owner@example.com', password: 'the password' });
    expect(sent[1]?.altcha).toMatch(/^payload-/);
  });

  it('spends each solution once: after a wrong password the next attempt carries the next one', async () => {
    const fake = server((body) =>
      body.altcha === undefined
        ? REQUIRED
        : failure(401, 'invalid_credentials', 'the e-mail address or the password is not correct'),
    );
    const { user } = renderApp('/sign-in', fake);
    await user.type(await screen.findByLabelText('E-mail'), 'owner@example.com');
    await user.type(screen.getByLabelText('Password'), 'a guess');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    await user.click(await screen.findByRole('button', { name: 'Solve the puzzle' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('the password is not correct');

    // The widget started again; solved before the next attempt, that attempt takes it at once.
    await user.click(await screen.findByRole('button', { name: 'Solve the puzzle' }));
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    await waitFor(() => expect(fake.callsTo('POST', '/session')).toHaveLength(3));
    const [none, first, second] = fake
      .callsTo('POST', '/session')
      .map((call) => (call.body as SignInBody).altcha);
    expect(none).toBeUndefined();
    expect(first).toMatch(/^payload-/);
    expect(second).toMatch(/^payload-/);
    expect(second).not.toBe(first);
  });

  it('stops sending by itself after two refused solutions and shows the refusal', async () => {
    const fake = server(() => REQUIRED);
    const { user } = renderApp('/sign-in', fake);
    await user.type(await screen.findByLabelText('E-mail'), 'owner@example.com');
    await user.type(screen.getByLabelText('Password'), 'the password');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    for (let i = 0; i < 2; i++)
      await user.click(await screen.findByRole('button', { name: 'Solve the puzzle' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('solve the proof-of-work challenge');
    expect(fake.callsTo('POST', '/session')).toHaveLength(3);
    expect(screen.getByRole('button', { name: 'Sign in' })).toBeEnabled();
  });
});

describe('where sign-in goes next (issue 26, 7)', () => {
  const ORIGIN = 'https://verify.example.net';
  it('keeps a path of this site, with its query and fragment', () => {
    expect(safeNext('?next=%2Fkeys%3Fpage%3D2%23top', ORIGIN)).toBe('/keys?page=2#top');
  });
  it('sends anything the URL parser would take to another origin to /', () => {
    for (const next of [
      '/%09/evil.example/',
      '/%0A/evil.example/',
      '/%0D%0A/evil.example/',
      '//evil.example/',
      '/%5Cevil.example/',
      'https://evil.example/',
      'javascript:alert(1)',
    ])
      expect(safeNext(`?next=${next}`, ORIGIN), next).toBe('/');
  });
  it('never gives back a path that starts with //', () => {
    expect(safeNext('?next=/.//evil.example/', ORIGIN)).toBe('/evil.example/');
    expect(safeNext('', ORIGIN)).toBe('/');
  });
});
