import { describe, expect, it } from 'vitest';
import type { DnsOutcome, SmtpOutcome, SmtpOutcomeKind } from '../../src/engine/outcome.js';
import { ENGINE_REASONS, STATUSES } from '../../src/engine/types.js';
import type { Reason, Status } from '../../src/engine/types.js';
import { decideVerdict, invalidFormatVerdict, SCORE_BANDS } from '../../src/engine/verdict.js';
import type { Verdict, VerdictInput } from '../../src/engine/verdict.js';

const host = { exchange: 'mx.example.com', priority: 10, addresses: ['127.0.0.2'] };
const dnsOk: DnsOutcome = {
  kind: 'ok',
  records: [{ exchange: host.exchange, priority: 10 }],
  implicit: false,
  hosts: [host],
};
const dnsOutcomes: Record<DnsOutcome['kind'], DnsOutcome> = {
  ok: dnsOk,
  nxdomain: { kind: 'nxdomain' },
  no_mail_host: { kind: 'no_mail_host', records: [] },
  null_mx: { kind: 'null_mx' },
  error: { kind: 'error', detail: 'SERVFAIL' },
};

function smtp(kind: SmtpOutcomeKind, catchAll: boolean | null = null): SmtpOutcome {
  return {
    kind,
    catchAll,
    evidence: {
      host: host.exchange,
      code: 250,
      enhancedCode: null,
      message: 'OK',
      tls: false,
      durationMs: 5,
    },
  };
}

function input(overrides: Partial<VerdictInput>): VerdictInput {
  return { disposable: false, role: false, free: false, dns: dnsOk, smtp: null, ...overrides };
}

function expectVerdict(verdict: Verdict, status: Status, reason: Reason | null): void {
  expect({ status: verdict.status, reason: verdict.reason, valid: verdict.valid }).toEqual({
    status,
    reason,
    valid: status === 'deliverable',
  });
}

describe('decideVerdict: the table, row by row', () => {
  it('not a well-formed address → undeliverable invalid_email_format, score 0', () => {
    expect(invalidFormatVerdict()).toEqual({
      status: 'undeliverable',
      reason: 'invalid_email_format',
      valid: false,
      score: 0,
    });
  });

  it('RCPT accepted, domain not catch-all → deliverable, valid, reason null', () => {
    expectVerdict(decideVerdict(input({ smtp: smtp('accepted', false) })), 'deliverable', null);
  });

  it('RCPT accepted and catch-all not tested → deliverable', () => {
    expectVerdict(decideVerdict(input({ smtp: smtp('accepted', null) })), 'deliverable', null);
  });

  it('RCPT rejected → undeliverable smtp_rejected', () => {
    expectVerdict(decideVerdict(input({ smtp: smtp('rejected') })), 'undeliverable', 'smtp_rejected');
  });

  it('mailbox full → risky mailbox_full', () => {
    expectVerdict(decideVerdict(input({ smtp: smtp('mailbox_full') })), 'risky', 'mailbox_full');
  });

  it('catch-all domain → risky catch_all, not valid', () => {
    expectVerdict(decideVerdict(input({ smtp: smtp('accepted', true) })), 'risky', 'catch_all');
  });

  it('disposable domain → risky disposable_domain', () => {
    expectVerdict(
      decideVerdict(input({ disposable: true, smtp: smtp('accepted', false) })),
      'risky',
      'disposable_domain',
    );
  });

  it('greylisted → unknown greylisted', () => {
    expectVerdict(decideVerdict(input({ smtp: smtp('greylisted') })), 'unknown', 'greylisted');
  });

  it('policy block → unknown smtp_blocked', () => {
    expectVerdict(decideVerdict(input({ smtp: smtp('blocked') })), 'unknown', 'smtp_blocked');
  });

  it('every MX host unavailable → unknown smtp_unavailable', () => {
    expectVerdict(decideVerdict(input({ smtp: smtp('unavailable') })), 'unknown', 'smtp_unavailable');
  });

  it('time budget ran out → unknown smtp_timeout', () => {
    expectVerdict(decideVerdict(input({ smtp: smtp('timeout') })), 'unknown', 'smtp_timeout');
  });

  it('non-ASCII local part, server without SMTPUTF8 → unknown smtp_unicode_unsupported', () => {
    expectVerdict(
      decideVerdict(input({ smtp: smtp('unicode_unsupported') })),
      'unknown',
      'smtp_unicode_unsupported',
    );
  });

  it('DNS failure → unknown dns_error, never undeliverable', () => {
    expectVerdict(decideVerdict(input({ dns: dnsOutcomes.error })), 'unknown', 'dns_error');
  });

  it('NXDOMAIN → undeliverable domain_not_found', () => {
    expectVerdict(decideVerdict(input({ dns: dnsOutcomes.nxdomain })), 'undeliverable', 'domain_not_found');
  });

  it('no mail host → undeliverable no_mx_records', () => {
    expectVerdict(decideVerdict(input({ dns: dnsOutcomes.no_mail_host })), 'undeliverable', 'no_mx_records');
  });

  it('null MX → undeliverable null_mx', () => {
    expectVerdict(decideVerdict(input({ dns: dnsOutcomes.null_mx })), 'undeliverable', 'null_mx');
  });

  it('nothing ran (offline) → unknown test_mode', () => {
    expectVerdict(decideVerdict(input({ dns: null, smtp: null })), 'unknown', 'test_mode');
  });

  it('offline but disposable → risky disposable_domain', () => {
    expectVerdict(decideVerdict(input({ disposable: true, dns: null })), 'risky', 'disposable_domain');
  });

  it('an address literal probed without DNS → the SMTP outcome decides', () => {
    expectVerdict(decideVerdict(input({ dns: null, smtp: smtp('accepted', false) })), 'deliverable', null);
  });

  it('DNS found mail hosts but no probe ran → unknown smtp_unavailable', () => {
    expectVerdict(decideVerdict(input({ smtp: null })), 'unknown', 'smtp_unavailable');
  });
});

describe('decideVerdict: precedence', () => {
  it('a domain that cannot receive mail is undeliverable even when disposable', () => {
    for (const dns of [dnsOutcomes.nxdomain, dnsOutcomes.no_mail_host, dnsOutcomes.null_mx]) {
      expect(decideVerdict(input({ dns, disposable: true })).status).toBe('undeliverable');
    }
  });

  it('a rejected mailbox is undeliverable even at a disposable domain', () => {
    expectVerdict(
      decideVerdict(input({ disposable: true, smtp: smtp('rejected') })),
      'undeliverable',
      'smtp_rejected',
    );
  });

  it('disposable wins over catch-all, mailbox full and every unknown outcome', () => {
    for (const kind of ['mailbox_full', 'greylisted', 'blocked', 'unavailable', 'timeout'] as const) {
      expect(decideVerdict(input({ disposable: true, smtp: smtp(kind) })).reason).toBe('disposable_domain');
    }
    expect(decideVerdict(input({ disposable: true, smtp: smtp('accepted', true) })).reason).toBe(
      'disposable_domain',
    );
    expect(decideVerdict(input({ disposable: true, dns: dnsOutcomes.error })).reason).toBe(
      'disposable_domain',
    );
  });

  it('role and free flags never change the status or the reason', () => {
    for (const smtpOutcome of [
      smtp('accepted', false),
      smtp('accepted', true),
      smtp('rejected'),
      smtp('timeout'),
    ]) {
      const plain = decideVerdict(input({ smtp: smtpOutcome }));
      const flagged = decideVerdict(input({ smtp: smtpOutcome, role: true, free: true }));
      expect([flagged.status, flagged.reason]).toEqual([plain.status, plain.reason]);
    }
  });
});

// Every combination of inputs the verdict can see.
const smtpVariants: (SmtpOutcome | null)[] = [
  null,
  smtp('accepted', true),
  smtp('accepted', false),
  smtp('accepted', null),
  ...(
    [
      'rejected',
      'mailbox_full',
      'greylisted',
      'blocked',
      'unavailable',
      'timeout',
      'unicode_unsupported',
    ] as const
  ).map((k) => smtp(k)),
];
const allInputs: VerdictInput[] = [];
for (const dns of [null, ...Object.values(dnsOutcomes)]) {
  for (const smtpOutcome of smtpVariants) {
    for (const disposable of [false, true]) {
      for (const role of [false, true]) {
        for (const free of [false, true]) allInputs.push({ dns, smtp: smtpOutcome, disposable, role, free });
      }
    }
  }
}
const allVerdicts = [...allInputs.map(decideVerdict), invalidFormatVerdict()];

describe('scores', () => {
  it('bands do not overlap with deliverable, which alone reaches 60', () => {
    for (const status of STATUSES) {
      if (status !== 'deliverable') expect(SCORE_BANDS[status].max).toBeLessThan(60);
    }
    expect(SCORE_BANDS.deliverable.min).toBeGreaterThanOrEqual(60);
  });

  it('every verdict of every input combination scores inside its band', () => {
    for (const verdict of allVerdicts) {
      const band = SCORE_BANDS[verdict.status];
      expect(Number.isInteger(verdict.score)).toBe(true);
      expect(verdict.score).toBeGreaterThanOrEqual(band.min);
      expect(verdict.score).toBeLessThanOrEqual(band.max);
    }
  });

  it('a score of 60 or more means deliverable, and deliverable means 60 or more', () => {
    for (const verdict of allVerdicts) expect(verdict.score >= 60).toBe(verdict.status === 'deliverable');
  });

  it('valid is true exactly for deliverable, and reason is null exactly when valid', () => {
    for (const verdict of allVerdicts) {
      expect(verdict.valid).toBe(verdict.status === 'deliverable');
      expect(verdict.reason === null).toBe(verdict.valid);
    }
  });

  it('every reason in ENGINE_REASONS is reachable', () => {
    expect(new Set(allVerdicts.map((v) => v.reason).filter((r) => r !== null))).toEqual(
      new Set(ENGINE_REASONS),
    );
  });

  it('role and free each lower the score a little, except the fixed undeliverable scores', () => {
    for (const base of allInputs.filter((i) => !i.role && !i.free)) {
      const plain = decideVerdict(base).score;
      const role = decideVerdict({ ...base, role: true }).score;
      const free = decideVerdict({ ...base, free: true }).score;
      const both = decideVerdict({ ...base, role: true, free: true }).score;
      if (decideVerdict(base).status === 'undeliverable') {
        expect([role, free, both]).toEqual([plain, plain, plain]);
      } else {
        expect(role).toBeLessThan(plain);
        expect(free).toBeLessThan(plain);
        expect(both).toBeLessThan(Math.min(role, free));
        expect(plain - both).toBeLessThanOrEqual(10);
      }
    }
  });

  it('orders the risky reasons catch-all > mailbox full > disposable, disposable at 10-15', () => {
    const score = (i: Partial<VerdictInput>): number => decideVerdict(input(i)).score;
    const catchAll = score({ smtp: smtp('accepted', true) });
    const full = score({ smtp: smtp('mailbox_full') });
    const disposable = score({ disposable: true });
    expect(catchAll).toBeGreaterThan(full);
    expect(full).toBeGreaterThan(disposable);
    expect(catchAll).toBeGreaterThanOrEqual(50);
    for (const role of [false, true]) {
      for (const free of [false, true]) {
        const s = decideVerdict(input({ disposable: true, role, free })).score;
        expect(s).toBeGreaterThanOrEqual(10);
        expect(s).toBeLessThanOrEqual(15);
      }
    }
  });

  it('ranks greylisted highest and dns_error lowest among unknown outcomes', () => {
    const unknown = allVerdicts.filter((v) => v.status === 'unknown');
    const best = Math.max(...unknown.map((v) => v.score));
    const worst = Math.min(...unknown.map((v) => v.score));
    expect(decideVerdict(input({ smtp: smtp('greylisted') })).score).toBe(best);
    expect(decideVerdict(input({ dns: dnsOutcomes.error, role: true, free: true })).score).toBe(worst);
  });

  it('is deterministic', () => {
    for (const i of allInputs) expect(decideVerdict(i)).toEqual(decideVerdict(structuredClone(i)));
  });
});
