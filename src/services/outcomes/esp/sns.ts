/**
 * Amazon SNS message signatures (docs/outcomes.md, "Amazon SES"): SignatureVersion 1 (RSA with
 * SHA-1) and 2 (RSA with SHA-256) over SNS's canonical string, with the public key of the
 * certificate at `SigningCertURL`. The certificate is fetched only from an https URL whose host is
 * `sns.<region>.amazonaws.com` (or `.amazonaws.com.cn`): the check is here, before any fetch, so
 * no fetcher (the default one or a test's) is ever asked for another host's certificate.
 */
import { verify, X509Certificate, type KeyObject } from 'node:crypto';
import type { Clock } from '../../../clock.js';
import { HOUR } from '../../../clock.js';
import { AppError } from '../../../errors.js';
import { objectOf, parseJson, unreadable } from './mapped.js';

/** Gets the body of an https URL already checked by `snsUrl` (the certificate, or a subscription's confirmation). */
export type SnsFetch = (url: URL) => Promise<string>;

export type SnsMessageType = 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';

export interface SnsMessage {
  Type: SnsMessageType;
  MessageId: string;
  TopicArn: string;
  Message: string;
  Timestamp: string;
  Subject?: string;
  Token?: string;
  SubscribeURL?: string;
}

const SNS_HOST = /^sns\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/;
const TOPIC_ARN = /^arn:aws(-cn|-us-gov)?:sns:([a-z0-9-]+):\d{12}:[A-Za-z0-9_.-]{1,256}$/;

/** The URL if it is https on an SNS host of the topic's region; invalid_signature otherwise. */
export function snsUrl(raw: unknown, what: string, region?: string): URL {
  let url: URL | null = null;
  try {
    url = typeof raw === 'string' ? new URL(raw) : null;
  } catch {
    url = null;
  }
  const host = url === null ? null : SNS_HOST.exec(url.hostname);
  if (
    url === null ||
    url.protocol !== 'https:' ||
    url.port !== '' ||
    url.username !== '' ||
    url.password !== '' ||
    host === null
  )
    throw new AppError(
      'invalid_signature',
      `${what} is not an https URL of an Amazon SNS host (sns.<region>.amazonaws.com)`,
    );
  if (region !== undefined && host[1] !== region)
    throw new AppError('invalid_signature', `${what} is not in the topic's region (${region})`);
  return url;
}

const FIELDS: Readonly<Record<SnsMessageType, readonly (keyof SnsMessage)[]>> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: [
    'Message',
    'MessageId',
    'SubscribeURL',
    'Timestamp',
    'Token',
    'TopicArn',
    'Type',
  ],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};

/** SNS's string to sign: each field present, in this order, as `name\nvalue\n`. */
export function canonicalString(message: SnsMessage): string {
  let out = '';
  for (const field of FIELDS[message.Type]) {
    const value = message[field];
    if (value !== undefined) out += `${field}\n${value}\n`;
  }
  return out;
}

/** The region of a topic ARN, or null when it is not one. */
export function topicRegion(arn: string): string | null {
  return TOPIC_ARN.exec(arn)?.[2] ?? null;
}

/** Certificates kept, and for how long: SNS rotates its certificate rarely, and a new URL is a new entry. */
const CACHE_SIZE = 32;
const CACHE_MS = 24 * HOUR;

export interface SnsVerifier {
  /** Reads an SNS message from the body and checks its signature; throws invalid_signature or invalid_hook_payload. */
  verify(body: Buffer): Promise<SnsMessage>;
}

export function createSnsVerifier(deps: { fetch: SnsFetch; clock: Clock }): SnsVerifier {
  const cache = new Map<string, { key: KeyObject; until: number }>();
  async function certificateKey(url: URL): Promise<KeyObject> {
    const now = deps.clock.now().getTime();
    const kept = cache.get(url.href);
    if (kept !== undefined && kept.until > now) return kept.key;
    let pem: string;
    try {
      pem = await deps.fetch(url);
    } catch {
      // A network failure, not a forgery: SNS retries, and a later try may reach the certificate.
      throw new AppError('service_unavailable', 'the SNS signing certificate could not be fetched now');
    }
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(pem);
    } catch {
      throw new AppError('invalid_signature', 'the SNS signing certificate is not a certificate');
    }
    if (Date.parse(cert.validFrom) > now || Date.parse(cert.validTo) < now)
      throw new AppError('invalid_signature', 'the SNS signing certificate is not valid now');
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(url.href, { key: cert.publicKey, until: now + CACHE_MS });
    return cert.publicKey;
  }
  return {
    async verify(body) {
      const raw = objectOf(parseJson(body, 'Amazon SNS'));
      if (raw === null) unreadable('an Amazon SNS body is a JSON object');
      if (raw.Signature === undefined && raw.Type === undefined)
        throw new AppError(
          'invalid_signature',
          'the body is not an SNS message (raw message delivery is on?): turn raw message delivery off, so that SNS signs it',
        );
      const type = raw.Type;
      if (
        type !== 'Notification' &&
        type !== 'SubscriptionConfirmation' &&
        type !== 'UnsubscribeConfirmation'
      )
        unreadable('Type: not an SNS message type');
      for (const field of FIELDS[type])
        if (field !== 'Subject' && typeof raw[field] !== 'string')
          unreadable(`${field}: missing from the SNS message`);
      if (raw.Subject !== undefined && typeof raw.Subject !== 'string') unreadable('Subject: not a string');
      const message = raw as unknown as SnsMessage;
      const region = topicRegion(message.TopicArn);
      if (region === null) unreadable('TopicArn: not an SNS topic ARN');
      const version = raw.SignatureVersion;
      if (version !== '1' && version !== '2')
        throw new AppError('invalid_signature', 'SignatureVersion: 1 or 2 is needed');
      if (typeof raw.Signature !== 'string')
        throw new AppError('invalid_signature', 'the SNS message carries no signature');
      const key = await certificateKey(snsUrl(raw.SigningCertURL, 'SigningCertURL'));
      let valid = false;
      try {
        valid = verify(
          version === '1' ? 'sha1' : 'sha256',
          Buffer.from(canonicalString(message), 'utf8'),
          key,
          Buffer.from(raw.Signature, 'base64'),
        );
      } catch {
        valid = false;
      }
      if (!valid) throw new AppError('invalid_signature', 'the SNS signature does not match its certificate');
      return message;
    },
  };
}
