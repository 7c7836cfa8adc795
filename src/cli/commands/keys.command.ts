/**
 * `mailverdict keys create|revoke|list`: API keys of an account. The secret is printed only by
 * `create`, once; nothing else can show it again.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { systemClock } from '../../clock.js';
import { keyCapCost } from '../../services/keys/key-cap.service.js';
import { SCOPES, createKeyBy, listKeys, revokeKeyBy } from '../../services/keys/keys.service.js';
import { BY_OPERATOR } from '../../services/accounts/audit.service.js';
import { plansFromConfig } from '../../services/usage/plans.js';
import type { DailyCapCost } from '../../services/keys/publishable-keys.js';
import { AppError } from '../../errors.js';
import { loadWidgetAsset, widgetSnippet } from '../../services/keys/widget-asset.js';
import { addCommonOptions, print, withStore, type StoreFlags } from '../cli-support.js';

type CommonFlags = StoreFlags;

interface CreateFlags {
  account: string;
  kind: string;
  scopes?: string;
  name?: string;
  publishable?: boolean;
  allowedOrigin?: string[];
  visitorRateLimit?: number;
  keyRateLimit?: number;
  dailyCap?: number;
}

function int(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n))
    throw new InvalidArgumentError(`expected a whole number, got "${value}".`);
  return n;
}

/** One day at a publishable key's cap, in words (issue 26). */
function capCostLine(cost: DailyCapCost): string {
  const cap = `daily cap ${cost.daily_cap}${cost.default_cap ? ' (default)' : ''}`;
  if (cost.day_percent_of_quota === null || cost.monthly_quota === null)
    return `${cap}: the account has no monthly quota`;
  return `${cap}: one day at the cap is ${cost.day_percent_of_quota} % of the monthly quota of ${cost.monthly_quota}, 30 days ${
    Math.round(cost.day_percent_of_quota * 30 * 10) / 10
  } %${cost.month_exceeds_quota ? ' (more than the quota: lower the cap)' : ''}`;
}

export function registerKeysCommand(program: Command): void {
  const keys = program.command('keys').description('Create, revoke and list API keys.');

  addCommonOptions(
    keys
      .command('create')
      .description('Create an API key and print its secret (the only time it is shown).')
      .requiredOption('--account <account-id>', 'the account the key belongs to')
      .requiredOption(
        '--kind <kind>',
        'live (real verifications, counted) or test (fixed results, not counted)',
      )
      .option('--scopes <list>', `comma-separated scopes (default all: ${SCOPES.join(',')})`)
      .option('--name <name>', 'a label for the key')
      .option(
        '--publishable',
        'a publishable key for web pages (docs/widget.md): POST /v1/verify only, from --allowed-origin',
      )
      .option(
        '--allowed-origin <origin>',
        'publishable: an origin allowed to use the key, e.g. https://shop.example (repeatable)',
        (value: string, previous: string[] = []) => [...previous, value],
      )
      .option(
        '--visitor-rate-limit <n>',
        'publishable: requests per second per visitor (default: the server’s)',
        int,
      )
      .option(
        '--key-rate-limit <n>',
        'publishable: requests per second of the key (default: the server’s)',
        int,
      )
      .option(
        '--daily-cap <n>',
        'publishable: verifications per UTC day (default: --publishable-daily-share of the account’s monthly quota; a cap whose 30 days exceed the quota is warned about)',
        int,
      ),
  ).action(async (flags: CommonFlags & CreateFlags) => {
    if (!flags.publishable && flags.allowedOrigin !== undefined)
      throw new AppError('invalid_request', '--allowed-origin needs --publishable');
    const { made: created, publicBaseUrl } = await withStore(flags, async (db, config) => {
      const made = await createKeyBy(
        db,
        systemClock,
        {
          ...(flags.publishable
            ? {
                publishable: {
                  allowedOrigins: flags.allowedOrigin ?? [],
                  visitorRateLimit: flags.visitorRateLimit ?? null,
                  keyRateLimit: flags.keyRateLimit ?? null,
                  dailyCap: flags.dailyCap ?? null,
                },
              }
            : {}),
          accountId: flags.account,
          kind: flags.kind,
          ...(flags.scopes === undefined
            ? {}
            : {
                scopes: flags.scopes
                  .split(',')
                  .map((s) => s.trim())
                  .filter((s) => s !== ''),
              }),
          name: flags.name ?? null,
        },
        BY_OPERATOR,
      );
      // What one day at a publishable key's cap costs, and a warning when 30 of them exceed the quota.
      const capCost = made.record.publishable
        ? await keyCapCost(
            { db, plans: plansFromConfig(config), defaults: config.publishable },
            made.record.account_id,
            made.record.daily_cap,
          )
        : null;
      return { made: { ...made, capCost }, publicBaseUrl: config.publicBaseUrl };
    });
    const { id, ...record } = created.record;
    // A publishable key goes into a page: the snippet the keys page shows, pinned by its integrity hash.
    const asset = record.publishable ? loadWidgetAsset() : null;
    const snippet =
      asset && widgetSnippet({ url: `${publicBaseUrl}/widget.js`, integrity: asset.integrity }, created.key);
    const out = {
      id,
      key: created.key,
      ...record,
      cap_cost: created.capCost,
      ...(record.publishable ? { widget_snippet: snippet, widget_integrity: asset?.integrity ?? null } : {}),
    };
    if (created.capCost?.warning)
      process.stderr.write(`mailverdict: warning: ${created.capCost.warning}
`);
    print(flags.json, out, () =>
      [
        `created ${out.publishable ? 'publishable ' : ''}${out.kind} key ${out.id} (scopes ${out.scopes.join(',')}${
          out.publishable ? `; origins ${out.allowed_origins.join(' ')}` : ''
        })`,
        ...(created.capCost === null ? [] : [`  ${capCostLine(created.capCost)}`]),
        `  ${out.key}`,
        ...(!record.publishable
          ? ['Store it now: it is not shown again.']
          : snippet === null
            ? [
                'It goes into web pages (not a secret). The widget is not built here (npm run build), so there is no snippet.',
              ]
            : [
                'It goes into web pages, it is not a secret. Add this to the signup page (the integrity hash pins',
                'this build of the widget; after an upgrade the dashboard’s keys page shows the new one):',
                '',
                snippet,
              ]),
      ].join('\n'),
    );
  });

  addCommonOptions(
    keys
      .command('revoke')
      .description('Revoke a key; it is refused from the next request on.')
      .argument('<key-id>'),
  ).action(async (id: string, flags: CommonFlags) => {
    const view = await withStore(flags, async (db) => {
      return revokeKeyBy(db, systemClock, id, BY_OPERATOR);
    });
    print(flags.json, view, () => `revoked key ${view.id} (${view.display}) at ${view.revoked_at ?? ''}`);
  });

  addCommonOptions(
    keys
      .command('list')
      .description("List an account's keys (never their secrets).")
      .requiredOption('--account <account-id>', 'the account'),
  ).action(async (flags: CommonFlags & { account: string }) => {
    const list = await withStore(flags, async (db, config) => {
      const spend = { db, plans: plansFromConfig(config), defaults: config.publishable };
      const views = await listKeys(db, flags.account);
      return Promise.all(
        views.map(async (k) => ({
          ...k,
          cap_cost: k.publishable ? await keyCapCost(spend, k.account_id, k.daily_cap) : null,
        })),
      );
    });
    print(flags.json, list, () =>
      list.length === 0
        ? 'no keys'
        : list
            .map(
              (k) =>
                `${k.id}  ${k.display}  ${k.kind}  ${k.status}  ${k.scopes.join(',')}${k.name ? `  ${k.name}` : ''}${
                  k.cap_cost === null ? '' : `\n    ${capCostLine(k.cap_cost)}`
                }`,
            )
            .join('\n'),
    );
  });
}
