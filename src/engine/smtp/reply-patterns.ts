/**
 * The reply-pattern table: what the text of a refusal says, for the servers whose meaning lives in
 * the text rather than in the code. Servers without enhanced status codes, qmail and its plugins
 * writing the code inside the text, and refusals phrased as policy with no code at all would
 * otherwise fool a classifier that reads codes first: a policy refusal called a missing mailbox, a
 * missing mailbox called a policy block.
 *
 * Each row quotes one reply as its server writes it (from the vendor's public documentation or the
 * MTA's source); test/engine/reply-patterns.test.ts classifies every example, and
 * docs/verdicts.md ("How replies are read") shows the same rows, checked against this file.
 *
 * Order is precedence, first match wins: greylisting; then everything about the prober, the sender
 * or a policy (so that no such text can ever end as "does not exist"); then the vendors' own
 * wordings; then the generic wordings of many servers. classify.ts reads the table before the
 * codes, and says how a meaning and the reply's class become an outcome.
 */

/** What a reply's text says, whatever its code. */
export type ReplyMeaning =
  /** The recipient does not exist, is disabled, or cannot be addressed at this server. */
  | 'no_mailbox'
  /** The mailbox exists and is over quota. */
  | 'mailbox_full'
  /** About the prober, its sender or the message: IP, name, reputation, relay, authentication. */
  | 'policy'
  /** The server says it may be either the mailbox or the prober: nothing can be concluded. */
  | 'unclear'
  /** Greylisting, a rate, a busy or short-of-resources server: nothing about the mailbox. */
  | 'try_later';

export const REPLY_MEANINGS: readonly ReplyMeaning[] = [
  'no_mailbox',
  'mailbox_full',
  'policy',
  'unclear',
  'try_later',
];

export const REPLY_FAMILIES = [
  'Gmail / Google Workspace',
  'Microsoft 365 / Exchange / Outlook.com',
  'Yahoo / AOL',
  'qmail',
  'Exim',
  'Sendmail',
  'Postfix',
  'Proofpoint',
  'Mimecast',
  'Barracuda',
  'any server',
] as const;
export type ReplyFamily = (typeof REPLY_FAMILIES)[number];

export interface ReplyPattern {
  family: ReplyFamily;
  /**
   * One reply as its server writes it: code, enhanced code if any, text; lines of a multi-line
   * reply separated by CRLF. It is the row's test case and its line in docs/verdicts.md.
   */
  example: string;
  /**
   * Tested against the reply's text with `<addresses>` removed; never global or sticky, which
   * would carry `lastIndex` from one reply to the next.
   */
  text: RegExp;
  /**
   * The enhanced code the row requires (the head's, or one written in the text): the code or a
   * class-and-subject prefix ("5.4.1", "5.7"); null when the reply must carry none (RFC 5321's generic wording, which a specific
   * code outranks); absent when any code or none will do.
   */
  code?: string | null;
  means: ReplyMeaning;
  /** Where the wording is documented. */
  source: string;
}

const GMAIL: ReplyFamily = 'Gmail / Google Workspace';
const MICROSOFT: ReplyFamily = 'Microsoft 365 / Exchange / Outlook.com';
const YAHOO: ReplyFamily = 'Yahoo / AOL';
const ANY: ReplyFamily = 'any server';

const GOOGLE_SMTP_ERRORS = 'support.google.com/a/answer/3726730';
const MICROSOFT_NDRS = 'learn.microsoft.com, "Email non-delivery reports and SMTP errors in Exchange Online"';
const OUTLOOK_POSTMASTER = 'sendersupport.olc.protection.outlook.com/pm/troubleshooting.aspx';
const YAHOO_ERRORS = 'senders.yahooinc.com/smtp-error-codes';
const MIMECAST_ERRORS = 'community.mimecast.com/docs/DOC-1369 ("Mimecast SMTP Error Codes")';
const QMAIL_SMTPD = 'qmail-smtpd.c (netqmail 1.06)';
const CHKUSER = 'chkuser 2.0 for qmail, chkuser_settings.h';
const POSTFIX_SMTPD = 'Postfix smtpd_check.c, postconf(5)';
const EXIM_SPEC = 'Exim specification, "Access control lists" and "Address verification"';
const SENDMAIL_CF = 'sendmail cf/README and sendmail/srvrsmtp.c';
const RFC5321 = 'RFC 5321 §4.2.2 and §4.2.3';

/** The table, in precedence order. */
export const REPLY_PATTERNS: readonly Readonly<ReplyPattern>[] = [
  // 1. Greylisting: a temporary refusal that says so.
  {
    family: ANY,
    example:
      '450 4.2.0 <bob@example.com>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/help/example.com.html',
    text: /gr[ae]y ?list/i,
    means: 'try_later',
    source: 'Postgrey (Postfix policy server), milter-greylist, Exim greylisting ACLs',
  },

  // 2. About the prober, its sender or the message, and replies that say it could be either.
  //    Before every row about the mailbox: a reply with such text is never "does not exist".
  {
    family: GMAIL,
    example:
      '550 5.7.1 [192.0.2.1] Our system has detected an unusual rate of unsolicited mail originating from your IP address. To protect our users from spam, mail sent from your IP address has been blocked. - gsmtp',
    text: /unusual rate of (?:unsolicited )?mail|very low reputation of the sending/i,
    means: 'policy',
    source: GOOGLE_SMTP_ERRORS,
  },
  {
    family: GMAIL,
    example:
      '550 5.7.26 This mail has been blocked because the sender is unauthenticated. Gmail requires all senders to authenticate with either SPF or DKIM. - gsmtp',
    text: /sender is unauthenticated|senders to authenticate (?:their email )?with/i,
    means: 'policy',
    source: GOOGLE_SMTP_ERRORS,
  },
  {
    family: GMAIL,
    example:
      '550 5.7.1 The user or domain that you are sending to (or from) has a policy that prohibited the mail that you sent. Please contact your domain administrator for further details. - gsmtp',
    text: /has a policy that prohibited/i,
    means: 'policy',
    source: GOOGLE_SMTP_ERRORS,
  },
  {
    family: GMAIL,
    example:
      '550 5.7.25 [192.0.2.1] The IP address sending this message does not have a PTR record setup, or the corresponding forward DNS entry does not point to the sending IP. - gsmtp',
    text: /does not have a PTR record|doesn'?t have a PTR record/i,
    means: 'policy',
    source: GOOGLE_SMTP_ERRORS,
  },
  {
    family: MICROSOFT,
    example:
      '550 5.7.606 Access denied, banned sending IP [192.0.2.1]. To request removal from this list please visit https://sender.office.com/ and follow the directions. AS(1430)',
    text: /banned sending IP|Access denied, banned sender|traffic not accepted from this IP/i,
    means: 'policy',
    source: 'learn.microsoft.com, "Fix email delivery issues for error codes 5.7.606 through 5.7.649"',
  },
  {
    family: MICROSOFT,
    example:
      "550 5.7.1 Unfortunately, messages from [192.0.2.1] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3150). You can also refer your provider to http://mail.live.com/mail/troubleshooting.aspx#errors.",
    text: /part of their network is on our block list|\(S3(?:140|150)\)/i,
    means: 'policy',
    source: OUTLOOK_POSTMASTER,
  },
  {
    family: MICROSOFT,
    example:
      "550 OU-002 (SNT004-MC4F39) Unfortunately, messages from 192.0.2.1 weren't sent. Please contact your Internet service provider. You can tell your provider to use the information in the links below for assistance. http://mail.live.com/mail/troubleshooting.aspx#errors",
    text: /\b(?:SC|DY|OU)-00\d\b|messages from \S+ weren'?t sent/i,
    means: 'policy',
    source: `${OUTLOOK_POSTMASTER} (the older SC-, DY- and OU- codes)`,
  },
  {
    family: MICROSOFT,
    example: '550 5.7.1 RESOLVER.RST.AuthRequired; authentication required [Stage: CreateMessage]',
    text: /RESOLVER\.RST\.\w+/i,
    means: 'policy',
    source: MICROSOFT_NDRS,
  },
  {
    family: MICROSOFT,
    example: '550 5.7.1 Unable to relay',
    text: /unable to relay/i,
    means: 'policy',
    source: MICROSOFT_NDRS,
  },
  {
    family: YAHOO,
    example:
      "553 5.7.1 [BL21] Connections will not be accepted from 192.0.2.1, because the ip is in Spamhaus's list; see http://postmaster.yahoo.com/errors/550-bl23.html",
    text: /\[BL\d{2}\]/i,
    means: 'policy',
    source: YAHOO_ERRORS,
  },
  {
    family: YAHOO,
    example:
      '553 5.7.2 [TSS09] All messages from 192.0.2.1 will be permanently deferred; Retrying will NOT succeed. See https://postmaster.yahooinc.com/error-codes',
    text: /\[TSS?\d{2}\]|will be permanently deferred/i,
    means: 'policy',
    source: YAHOO_ERRORS,
  },
  {
    family: YAHOO,
    example:
      '554 5.7.9 Message not accepted for policy reasons. See https://postmaster.yahooinc.com/error-codes',
    text: /not accepted for policy reasons/i,
    means: 'policy',
    source: YAHOO_ERRORS,
  },
  {
    family: YAHOO,
    example:
      '554 (RLY:B1) The information presented in the following link may help resolve this issue: http://postmaster.info.aol.com/errors/554rlyb1.html',
    text: /\b(?:RLY|HVU|DYN|RTR|CON|IPTS):[A-Z]{1,2}\d\b/,
    means: 'policy',
    source: 'AOL postmaster error pages (postmaster.info.aol.com/errors, archived)',
  },
  {
    family: 'qmail',
    example: "553 sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)",
    text: /isn'?t in my list of allowed rcpthosts/i,
    means: 'policy',
    source: `${QMAIL_SMTPD}, err_nogateway; ${CHKUSER}`,
  },
  {
    family: 'qmail',
    example: '553 sorry, your envelope sender is in my badmailfrom list (#5.7.1)',
    text: /envelope sender is in my badmailfrom list/i,
    means: 'policy',
    source: `${QMAIL_SMTPD}, err_bmf`,
  },
  {
    family: 'qmail',
    example: '571 sorry, you are violating our security policies (#5.1.1 - chkuser)',
    text: /violating our security policies|reached maximum number of recipients for one session/i,
    means: 'policy',
    source: CHKUSER,
  },
  {
    family: 'Exim',
    example:
      '550-Verification failed for <verify@probe.example>\r\n550-Unrouteable address\r\n550 Sender verify failed',
    text: /sender verify failed|sender verify callout/i,
    means: 'policy',
    source: EXIM_SPEC,
  },
  {
    family: 'Exim',
    example: '550 Administrative prohibition',
    text: /administrative prohibition/i,
    means: 'policy',
    source: `${EXIM_SPEC} (the default message of a "deny" ACL verb)`,
  },
  {
    family: 'Exim',
    example: '550 rejected because 192.0.2.1 is in a black list at zen.spamhaus.org',
    text: /is in a black list at/i,
    means: 'policy',
    source: `${EXIM_SPEC} ("dnslists" condition)`,
  },
  {
    family: 'Exim',
    example: '550 relay not permitted',
    text: /relay not permitted/i,
    means: 'policy',
    source: EXIM_SPEC,
  },
  {
    family: 'Exim',
    example:
      '550 The mail server could not deliver mail to bob@example.com.  The account or domain may not exist, they may be blacklisted, or missing the proper dns entries.',
    text: /account or domain may not exist/i,
    means: 'unclear',
    source: "cPanel's Exim configuration (its default refusal of an unroutable recipient)",
  },
  {
    family: 'Sendmail',
    example: '550 5.7.1 <bob@example.com>... Relaying denied. IP name lookup failed [192.0.2.1]',
    text: /\.\.\. Relaying denied/i,
    means: 'policy',
    source: SENDMAIL_CF,
  },
  {
    family: 'Sendmail',
    example: '550 5.7.1 <bob@example.com>... Access denied',
    text: /\.\.\. Access denied/i,
    means: 'policy',
    source: `${SENDMAIL_CF} (access database REJECT)`,
  },
  {
    family: 'Sendmail',
    example: '550 5.7.1 Rejected: 192.0.2.1 listed at zen.spamhaus.org',
    text: /Rejected: \S+ listed at/i,
    means: 'policy',
    source: `${SENDMAIL_CF} (FEATURE(dnsbl))`,
  },
  // Barracuda writes this refusal in Postfix's words, so its row comes before Postfix's.
  {
    family: 'Barracuda',
    example:
      '554 Service unavailable; Client host [192.0.2.1] blocked using Barracuda Reputation; http://www.barracudanetworks.com/reputation/?r=1&ip=192.0.2.1',
    text: /Barracuda Reputation|barracudanetworks\.com\/reputation|barracudacentral/i,
    means: 'policy',
    source: 'barracudacentral.org (Barracuda Reputation Block List)',
  },
  {
    family: 'Postfix',
    example: '554 5.7.1 <bob@example.com>: Relay access denied',
    text: /Relay access denied/i,
    means: 'policy',
    source: `${POSTFIX_SMTPD} (reject_unauth_destination)`,
  },
  {
    family: 'Postfix',
    example:
      '554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/192.0.2.1',
    text: /Client host \[[^\]]*\] blocked using/i,
    means: 'policy',
    source: `${POSTFIX_SMTPD} (reject_rbl_client)`,
  },
  {
    family: 'Postfix',
    example: '450 4.7.1 Client host rejected: cannot find your reverse hostname, [192.0.2.1]',
    text: /Client host rejected/i,
    means: 'policy',
    source: `${POSTFIX_SMTPD} (reject_unknown_client_hostname and client restrictions)`,
  },
  {
    family: 'Postfix',
    example:
      '550 5.1.0 <verify@probe.example>: Sender address rejected: User unknown in local recipient table',
    text: /Sender address rejected/i,
    means: 'policy',
    source: `${POSTFIX_SMTPD} (reject_unlisted_sender, sender restrictions)`,
  },
  {
    family: 'Postfix',
    example: '504 5.5.2 <localhost>: Helo command rejected: need fully-qualified hostname',
    text: /Helo command rejected/i,
    means: 'policy',
    source: `${POSTFIX_SMTPD} (reject_non_fqdn_helo_hostname)`,
  },
  {
    family: 'Postfix',
    example: '554 5.7.1 <bob@example.com>: Recipient address rejected: Access denied',
    text: /Recipient address rejected: Access denied/i,
    code: '5.7',
    means: 'policy',
    source: `${POSTFIX_SMTPD} (check_recipient_access with REJECT)`,
  },
  {
    family: 'Proofpoint',
    example: '550 5.7.0 Blocked - see https://ipcheck.proofpoint.com/?ip=192.0.2.1',
    text: /ipcheck\.proofpoint\.com|Proofpoint Dynamic Reputation/i,
    means: 'policy',
    source: 'ipcheck.proofpoint.com (Proofpoint Dynamic Reputation)',
  },
  {
    family: 'Mimecast',
    example: '554 Email rejected due to security policies - https://community.mimecast.com/docs/DOC-1369#554',
    text: /rejected due to security policies/i,
    means: 'policy',
    source: MIMECAST_ERRORS,
  },
  {
    family: 'Mimecast',
    example: '550 Envelope blocked - User Entry - https://community.mimecast.com/docs/DOC-1369#550',
    text: /envelope (?:blocked|rejected)/i,
    means: 'policy',
    source: MIMECAST_ERRORS,
  },
  {
    family: 'Mimecast',
    example: '550 Local CT IP Reputation - (reject) https://community.mimecast.com/docs/DOC-1369#550',
    text: /Local CT IP Reputation/i,
    means: 'policy',
    source: MIMECAST_ERRORS,
  },
  {
    family: 'Barracuda',
    example: '550 permanent failure for one or more recipients (bob@example.com:blocked)',
    text: /permanent failure for one or more recipients \([^)]*:blocked\)/i,
    means: 'policy',
    source: 'campus.barracuda.com, Email Security Service message log and bounces',
  },
  {
    family: ANY,
    example: '550 5.7.1 Mail from 192.0.2.1 refused: listed in bl.spamcop.net',
    text: /spamhaus|spamcop|\bsorbs\b|\brbl\b|dnsbl|\bblock ?list|\bblack ?list|blacklisted|listed (?:at|in|on|by)\b|blocked using/i,
    means: 'policy',
    source: 'DNS blocklist refusals of many servers',
  },
  {
    family: ANY,
    example: '550 5.1.1 Message rejected due to poor sender reputation',
    text: /reputation|\bspam|unsolicited|\babuse\b/i,
    means: 'policy',
    source: 'reputation and content refusals of many servers',
  },
  {
    family: ANY,
    example: '550 5.7.1 Connection refused: no reverse DNS for your IP 192.0.2.1',
    text: /client host|client ip|your ip|sender ip|sending ip|\bip address|\bptr\b|reverse (?:dns|hostname|lookup)|\brdns\b|\bhelo\b|\behlo\b|dynamic ip|residential/i,
    means: 'policy',
    source: "refusals of the prober's IP address or name by many servers",
  },
  {
    family: ANY,
    example: '553 5.7.1 We do not relay non-local mail, sorry.',
    text: /not permitted to relay|relay(?:ing)? (?:access )?(?:is )?(?:denied|not permitted|not allowed|prohibited)|do not relay|relaying denied/i,
    means: 'policy',
    source: 'relay refusals of many servers',
  },
  {
    family: ANY,
    example:
      '550-Requested action not taken: mailbox unavailable\r\n550 invalid DNS MX or A/AAAA resource record',
    text: /invalid DNS MX or A\/AAAA resource record/i,
    means: 'policy',
    source: "GMX and WEB.DE (the prober's sender domain has no MX or A/AAAA record)",
  },
  {
    family: ANY,
    example: '550 5.7.1 SPF check failed for the sending domain',
    text: /sender address|envelope sender|sender'?s (?:address|domain)|domain of sender|sender (?:domain|rejected|verify|denied|blocked|not allowed)|\bspf\b|\bdkim\b|\bdmarc\b|authenticat/i,
    means: 'policy',
    source: 'sender and authentication refusals of many servers',
  },
  {
    family: ANY,
    example: '550 5.7.1 Message refused by local policy',
    text: /\bpolic(?:y|ies)\b|administratively (?:prohibited|denied)|prohibited|not authori[sz]ed|\bbanned\b|\bblocked\b/i,
    means: 'policy',
    source: 'policy refusals of many servers',
  },
  {
    family: ANY,
    example: '451 4.7.1 Rate limit exceeded, too many connections from 192.0.2.1',
    text: /too many (?:connections|concurrent|errors|invalid)|rate[- ]limit|connection limit/i,
    means: 'policy',
    source: 'connection and rate limits of many servers',
  },
  {
    family: ANY,
    example: '530 5.7.0 Must issue a STARTTLS command first',
    text: /starttls|must issue|encryption required|requires encryption|tls required|requires tls/i,
    means: 'policy',
    source: 'Postfix (smtpd_tls_security_level = encrypt), Gmail, and other servers requiring TLS',
  },

  // 3. The vendors' own wordings about the mailbox: decided before the generic words below,
  //    which some of them would otherwise mislead (a full mailbox that is also "inactive").
  {
    family: GMAIL,
    example:
      "552 5.2.2 The recipient's inbox is out of storage space and inactive. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaPerm - gsmtp",
    text: /inbox is out of storage space|account that you tried to reach is over quota/i,
    means: 'mailbox_full',
    source: GOOGLE_SMTP_ERRORS,
  },
  {
    family: GMAIL,
    example:
      '550 5.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered. Please resend your message at a later time. - gsmtp',
    text: /is receiving mail (?:too quickly|at a rate)/i,
    means: 'try_later',
    source: GOOGLE_SMTP_ERRORS,
  },
  {
    family: GMAIL,
    example:
      "550 5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address for typos or unnecessary spaces. For more information, go to https://support.google.com/mail/?p=NoSuchUser - gsmtp",
    text: /account that you tried to reach does not exist/i,
    means: 'no_mailbox',
    source: GOOGLE_SMTP_ERRORS,
  },
  {
    family: GMAIL,
    example:
      '550 5.2.1 The email account that you tried to reach is disabled. For more information, go to https://support.google.com/mail/?p=DisabledUser - gsmtp',
    text: /account that you tried to reach is (?:disabled|inactive)/i,
    means: 'no_mailbox',
    source: GOOGLE_SMTP_ERRORS,
  },
  {
    family: GMAIL,
    example:
      "553 5.1.2 We weren't able to find the recipient domain. Please check for any spelling errors, and make sure you didn't enter any spaces, periods, or other punctuation after the recipient's email address. - gsmtp",
    text: /weren'?t able to find the recipient domain/i,
    means: 'no_mailbox',
    source: GOOGLE_SMTP_ERRORS,
  },
  {
    family: MICROSOFT,
    example: '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
    text: /RESOLVER\.ADR\.(?:Ex)?Recip(?:ient)?NotFound/i,
    means: 'no_mailbox',
    source: MICROSOFT_NDRS,
  },
  {
    family: MICROSOFT,
    example:
      '550 5.4.1 Recipient address rejected: Access denied. AS(201806281) [DM6NAM12FT045.eop-nam12.prod.protection.outlook.com]',
    text: /Recipient address rejected: Access denied/i,
    code: '5.4.1',
    means: 'no_mailbox',
    source:
      'learn.microsoft.com, "Fix NDR error 550 5.4.1 in Exchange Online" (Directory-Based Edge Blocking)',
  },
  {
    family: MICROSOFT,
    example:
      '550 5.5.0 Requested action not taken: mailbox unavailable (S2017062302). [BN8NAM12FT012.eop-nam12.prod.protection.outlook.com]',
    text: /mailbox unavailable/i,
    code: '5.5.0',
    means: 'no_mailbox',
    source: `${MICROSOFT_NDRS} (Outlook.com's "recipient not found")`,
  },
  {
    family: MICROSOFT,
    example:
      '554 5.2.2 mailbox full; STOREDRV.Deliver.Exception:QuotaExceededException.MapiExceptionShutoffQuotaExceeded',
    text: /QuotaExceeded/i,
    means: 'mailbox_full',
    source: MICROSOFT_NDRS,
  },
  {
    family: MICROSOFT,
    example: '451 4.7.500 Server busy. Please try again later from [192.0.2.1]. (AS761)',
    text: /Server busy\. Please try again later/i,
    means: 'try_later',
    source: MICROSOFT_NDRS,
  },
  {
    family: YAHOO,
    example:
      "554 delivery error: dd This user doesn't have a yahoo.com account (bob@yahoo.com) [0] - mta1011.mail.gq1.yahoo.com",
    text: /dd This user doesn'?t have an? \S+ account/i,
    means: 'no_mailbox',
    source: YAHOO_ERRORS,
  },
  {
    family: YAHOO,
    example:
      '554 delivery error: dd Sorry your message to bob@yahoo.com cannot be delivered. This mailbox is disabled (554.30). - mta1011.mail.gq1.yahoo.com',
    text: /This mailbox is disabled|dd \S+ is no longer valid/i,
    means: 'no_mailbox',
    source: YAHOO_ERRORS,
  },
  {
    family: YAHOO,
    example: '552 1 Requested mail action aborted, mailbox not found',
    text: /Requested mail action aborted, mailbox not found/i,
    means: 'no_mailbox',
    source: YAHOO_ERRORS,
  },
  {
    family: YAHOO,
    example: '451 Message temporarily deferred - [160]',
    text: /Message temporarily deferred/i,
    means: 'try_later',
    source: YAHOO_ERRORS,
  },
  {
    family: 'qmail',
    example: '550 sorry, no mailbox here by that name. (#5.1.1)',
    text: /no mailbox here by that name/i,
    means: 'no_mailbox',
    source: `qmail-local and vpopmail; ${CHKUSER}`,
  },
  {
    family: 'qmail',
    example: '553 sorry, this recipient is not in my validrcptto list (#5.7.1)',
    text: /not in my validrcptto list/i,
    means: 'no_mailbox',
    source: 'validrcptto patch for qmail-smtpd (qmail.jms1.net)',
  },
  {
    family: 'qmail',
    example: '553 sorry, your envelope recipient is in my badrcptto list (#5.7.1)',
    text: /in my badrcptto list/i,
    means: 'no_mailbox',
    source: 'badrcptto patch for qmail-smtpd',
  },
  {
    family: 'qmail',
    example: '522 sorry, recipient mailbox is full (#5.2.2 - chkuser)',
    text: /recipient mailbox is full/i,
    means: 'mailbox_full',
    source: CHKUSER,
  },
  {
    family: 'qmail',
    example: '430 system temporary unavailable, try again later (#4.3.0 - chkuser)',
    text: /system temporary unavailable/i,
    means: 'try_later',
    source: CHKUSER,
  },
  {
    family: 'Exim',
    example: '550 Unrouteable address',
    text: /unrout(?:e)?able address/i,
    means: 'no_mailbox',
    source: `${EXIM_SPEC} ("verify = recipient")`,
  },
  {
    family: 'Exim',
    example: '550 No Such User Here',
    text: /No Such User Here/i,
    means: 'no_mailbox',
    source: "cPanel's Exim configuration",
  },
  {
    family: 'Exim',
    example: '451 Temporary local problem - please try later',
    text: /Temporary local problem/i,
    means: 'try_later',
    source: EXIM_SPEC,
  },
  {
    family: 'Sendmail',
    example: '550 5.1.1 <bob@example.com>... User unknown',
    text: /\.\.\. User unknown/i,
    means: 'no_mailbox',
    source: SENDMAIL_CF,
  },
  {
    family: 'Sendmail',
    example: '452 4.4.5 Insufficient disk space; try again later',
    text: /Insufficient disk space/i,
    means: 'try_later',
    source: SENDMAIL_CF,
  },
  {
    family: 'Postfix',
    example: '550 5.1.1 <bob@example.com>: Recipient address rejected: User unknown in virtual mailbox table',
    text: /Recipient address rejected: User unknown in \w+ \w+ table/i,
    means: 'no_mailbox',
    source: `${POSTFIX_SMTPD} (reject_unlisted_recipient)`,
  },
  {
    family: 'Postfix',
    example:
      '550 5.1.1 <bob@example.com>: Recipient address rejected: undeliverable address: host mx2.example.com[192.0.2.2] said: 550 5.1.1 <bob@example.com>: Recipient address rejected: User unknown (in reply to RCPT TO command)',
    text: /Recipient address rejected: undeliverable address/i,
    means: 'no_mailbox',
    source: `${POSTFIX_SMTPD} (reject_unverified_recipient)`,
  },
  {
    family: 'Postfix',
    example:
      '450 4.1.1 <bob@example.com>: Recipient address rejected: unverified address: host mx2.example.com[192.0.2.2] said: 451 4.3.0 Temporary lookup failure',
    text: /Recipient address rejected: unverified address/i,
    means: 'try_later',
    source: `${POSTFIX_SMTPD} (reject_unverified_recipient)`,
  },
  {
    family: 'Proofpoint',
    example: '550 5.7.1 Recipient address rejected: User email address is marked as invalid',
    text: /email address is marked as invalid/i,
    means: 'no_mailbox',
    source: 'Proofpoint Essentials (recipients on the SMTP Discovery invalid list)',
  },
  {
    family: 'Mimecast',
    example:
      '550 Invalid Recipient - https://community.mimecast.com/docs/DOC-1369#550 [ZxCvBnMaSdFgHjKl.uk123]',
    text: /Invalid Recipient - https?:\/\/community\.mimecast\.com/i,
    means: 'no_mailbox',
    source: MIMECAST_ERRORS,
  },
  {
    family: 'Mimecast',
    example:
      '451 Internal resources are temporarily unavailable - https://community.mimecast.com/docs/DOC-1369#451',
    text: /Internal resources? (?:are )?temporarily unavailable/i,
    means: 'try_later',
    source: `${MIMECAST_ERRORS} (greylisting)`,
  },
  {
    family: 'Barracuda',
    example: '550 No such user (bob@example.com)',
    text: /No such user \([^)]*@[^)]*\)/i,
    means: 'no_mailbox',
    source: 'campus.barracuda.com, recipient verification',
  },

  // 4. Generic wordings of many servers.
  {
    family: ANY,
    example: '550 5.1.1 bob@example.com: Recipient unknown',
    text: /user unknown|unknown (?:user|recipient|mailbox|local[- ]part|e-?mail address)|recipient unknown|addressee unknown/i,
    means: 'no_mailbox',
    source: 'many servers (Exchange 2003, Lotus Domino, Zimbra...)',
  },
  {
    family: ANY,
    example: '550 5.1.1 No such mailbox',
    text: /no such (?:user|mailbox|recipient|account|address|person)/i,
    means: 'no_mailbox',
    source: 'many servers',
  },
  {
    family: ANY,
    example: "550 5.1.1 <bob@example.com> User doesn't exist: bob@example.com",
    text: /(?:does not|doesn'?t|no longer) exists?\b/i,
    means: 'no_mailbox',
    source: 'Dovecot LMTP and many servers',
  },
  {
    family: ANY,
    example: '550 5.2.1 Mailbox disabled, not accepting messages',
    text: /\b(?:mailbox|user|recipient|account|address)\b[^.;]{0,30}?\b(?:not found|not valid|invalid|inactive|disabled|not active|deactivated|suspended|closed)\b/i,
    means: 'no_mailbox',
    source: 'RFC 3463 (X.2.1 wording) and many servers',
  },
  {
    family: ANY,
    example: '550 Invalid recipient <bob@example.com>',
    text: /invalid (?:recipient|mailbox|user|address)|not a valid (?:user|recipient|mailbox|address)/i,
    means: 'no_mailbox',
    source: 'many servers',
  },
  {
    family: ANY,
    example: '550 Requested action not taken: mailbox unavailable',
    text: /mailbox (?:is )?unavailable/i,
    code: null,
    means: 'no_mailbox',
    source: `${RFC5321} (550); only without an enhanced code, which says more when present`,
  },
  {
    family: ANY,
    example: '553 Requested action not taken: mailbox name not allowed',
    text: /mailbox name not allowed/i,
    code: null,
    means: 'no_mailbox',
    source: `${RFC5321} (553); only without an enhanced code, which says more when present`,
  },
  {
    family: ANY,
    example: '551 User not local; please try <bob@other.example>',
    text: /user not local/i,
    means: 'no_mailbox',
    source: `${RFC5321} (551)`,
  },
  {
    family: ANY,
    example: '552 Requested mail action aborted: exceeded storage allocation',
    text: /over ?quota|quota exceeded|exceeded (?:the |its |their |your )?(?:storage|quota|mailbox size)|mailbox (?:is )?full|mailbox size limit|storage allocation|insufficient (?:user )?storage for/i,
    means: 'mailbox_full',
    source: `${RFC5321} (552) and many servers`,
  },
  {
    family: ANY,
    example: '452 4.5.3 Too many recipients',
    text: /too many recipients/i,
    means: 'try_later',
    source: 'RFC 5321 §4.5.3.1.10',
  },
  {
    family: ANY,
    example: '452 Requested action not taken: insufficient system storage',
    text: /insufficient system (?:storage|resources)/i,
    means: 'try_later',
    source: `${RFC5321} (452: the server's storage, not the mailbox's)`,
  },
];

const BRACKETED = /<[^>]*>/g;

/**
 * The reply text that patterns are tested against: the message with `<addresses>` removed, so
 * that a recipient such as <policy@example.com> cannot pass for a policy refusal.
 */
export function patternText(message: string): string {
  return message.includes('<') ? message.replace(BRACKETED, ' ') : message;
}

/**
 * The first row of the table that `text` (see `patternText`) matches, given the reply's enhanced
 * code (`enhancedCodeOf`); null when none does. Only refusals are read, and a plain walk is cheap
 * enough: 6-10 µs for a refusal that walks every row (87 when measured; Node 20, idle 2-core
 * EPYC; 20 µs at load average 8), against 50 µs of engine CPU per address in a pooled batch
 * (docs/benchmarks.md).
 */
export function findReplyPattern(text: string, enhancedCode: string | null): Readonly<ReplyPattern> | null {
  for (const row of REPLY_PATTERNS) {
    if (row.code !== undefined && !codeFits(row.code, enhancedCode)) continue;
    if (row.text.test(text)) return row;
  }
  return null;
}

function codeFits(required: string | null, actual: string | null): boolean {
  if (required === null) return actual === null;
  return actual !== null && (actual === required || actual.startsWith(`${required}.`));
}
