/**
 * Bounce and complaint messages as the mail systems that send them write them, one builder per
 * sender kind: Postfix (its bounce(8) templates: failure, delay, success), Exim (a DSN whose
 * Status is a generic 5.0.0 beside the remote server's 5.1.1), Microsoft 365 (a DSN with
 * `text/rfc822-headers`), an older Exchange's text-only NDR, Gmail ("Delivery Status Notification
 * (Failure)", a multipart/related notification with X-Original-Message-ID), Yahoo's qmail-style
 * "Failure Notice", an ARF report (RFC 5965's example), a policy refusal and an ordinary message.
 * Modelled on real samples (RFC 3464 and RFC 5965 appendices, the Postfix templates, bounces
 * collected by bounce parsers); the hosts, addresses and ids are the caller's or example ones.
 *
 * Each builder takes the recipient, the original Message-ID and a time, so a test can send the
 * same bounce twice or one per address. Lines end in CRLF as on the wire unless `lf` is asked.
 */

export interface BounceInput {
  /** The recipient the bounce or report is about. */
  rcpt: string;
  /** The original message's id, without angle brackets. */
  messageId?: string;
  /** RFC 5322 date of the original message's arrival (the bounce's Arrival-Date). */
  date?: string;
  /** Line ends as in an mbox file (LF) instead of CRLF. */
  lf?: boolean;
}

const DEFAULT_DATE = 'Mon,  9 Mar 2026 07:59:58 +0000 (UTC)';
const SENDER = 'news@sender.example';

function finish(text: string, input: BounceInput): string {
  const lf = text.replace(/\r?\n/g, '\n');
  return input.lf === true ? lf : lf.replace(/\n/g, '\r\n');
}

function original(input: BounceInput, extra = ''): string {
  return `Received: by mail.sender.example (Postfix, from userid 1000)
	id 4F2A81C0123; Mon,  9 Mar 2026 07:59:58 +0000 (UTC)
From: Sender News <${SENDER}>
To: <${input.rcpt}>
Subject: March offers
Message-ID: <${input.messageId ?? 'offer-1@sender.example'}>
Date: ${input.date ?? DEFAULT_DATE}
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8
${extra}
Hello, here are this month's offers.
`;
}

/** Postfix's failure template with the remote server's 550 5.1.1 (bounce(8), "Undelivered Mail Returned to Sender"). */
export function postfixHardBounce(input: BounceInput, status = '5.1.1', diagnostic?: string): string {
  const said =
    diagnostic ??
    `550 5.1.1 <${input.rcpt}>: Recipient address rejected: User unknown in virtual mailbox table`;
  const domain = input.rcpt.split('@')[1] ?? 'example.net';
  return finish(
    `Return-Path: <>
Received: by mail.sender.example (Postfix)
	id 7C3B21C0456; Mon,  9 Mar 2026 08:00:01 +0000 (UTC)
Date: Mon,  9 Mar 2026 08:00:01 +0000 (UTC)
From: MAILER-DAEMON@mail.sender.example (Mail Delivery System)
Subject: Undelivered Mail Returned to Sender
To: ${SENDER}
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status;
	boundary="4F2A81C0123.1773043201/mail.sender.example"
Content-Transfer-Encoding: 8bit
Message-Id: <20260309080001.7C3B21C0456@mail.sender.example>

This is a MIME-encapsulated message.

--4F2A81C0123.1773043201/mail.sender.example
Content-Description: Notification
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: 8bit

This is the mail system at host mail.sender.example.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients. It's attached below.

For further assistance, please send mail to postmaster.

If you do so, please include this problem report. You can
delete your own text from the attached returned message.

                   The mail system

<${input.rcpt}>: host mx1.${domain}[192.0.2.25] said: ${said} (in reply to RCPT TO
    command)

--4F2A81C0123.1773043201/mail.sender.example
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mail.sender.example
X-Postfix-Queue-ID: 4F2A81C0123
X-Postfix-Sender: rfc822; ${SENDER}
Arrival-Date: ${input.date ?? DEFAULT_DATE}

Final-Recipient: rfc822; ${input.rcpt}
Original-Recipient: rfc822;${input.rcpt}
Action: failed
Status: ${status}
Remote-MTA: dns; mx1.${domain}
Diagnostic-Code: smtp; ${said}

--4F2A81C0123.1773043201/mail.sender.example
Content-Description: Undelivered Message
Content-Type: message/rfc822
Content-Transfer-Encoding: 8bit

${original(input)}
--4F2A81C0123.1773043201/mail.sender.example--
`,
    input,
  );
}

/** A policy refusal of the sender through Postfix's template: 5.7.1 spam (or `status` and its words). */
export function postfixPolicyBounce(input: BounceInput, status = '5.7.1'): string {
  const said =
    status === '5.7.26'
      ? '550-5.7.26 This mail is unauthenticated, which poses a security risk to the sender and Gmail users, and has been blocked. The sender must authenticate with at least one of SPF or DKIM. - gsmtp'
      : `554 5.7.1 Service unavailable; Client host [198.51.100.7] blocked using zen.spamhaus.org`;
  return postfixHardBounce(input, status, said);
}

/** Postfix's delay template (bounce(8), "Delayed Mail (still being retried)"): Action delayed, 4.4.1. */
export function postfixDelay(input: BounceInput): string {
  const domain = input.rcpt.split('@')[1] ?? 'example.net';
  return finish(
    `Date: Mon,  9 Mar 2026 12:00:03 +0000 (UTC)
From: MAILER-DAEMON@mail.sender.example (Mail Delivery System)
Subject: Delayed Mail (still being retried)
To: ${SENDER}
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status;
	boundary="5A1B01C0789.1773057603/mail.sender.example"
Message-Id: <20260309120003.9D0E11C0AAA@mail.sender.example>

This is a MIME-encapsulated message.

--5A1B01C0789.1773057603/mail.sender.example
Content-Description: Notification
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mail.sender.example.

####################################################################
# THIS IS A WARNING ONLY.  YOU DO NOT NEED TO RESEND YOUR MESSAGE. #
####################################################################

Your message could not be delivered for more than 4 hour(s).
It will be retried until it is 5 day(s) old.

                   The mail system

<${input.rcpt}>: connect to mx1.${domain}[192.0.2.25]:25: Connection timed
    out

--5A1B01C0789.1773057603/mail.sender.example
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mail.sender.example
X-Postfix-Queue-ID: 5A1B01C0789
X-Postfix-Sender: rfc822; ${SENDER}
Arrival-Date: ${input.date ?? DEFAULT_DATE}

Final-Recipient: rfc822; ${input.rcpt}
Original-Recipient: rfc822;${input.rcpt}
Action: delayed
Status: 4.4.1
Diagnostic-Code: X-Postfix; connect to mx1.${domain}[192.0.2.25]:25: Connection
    timed out
Will-Retry-Until: Sat, 14 Mar 2026 07:59:58 +0000 (UTC)

--5A1B01C0789.1773057603/mail.sender.example
Content-Description: Undelivered Message Headers
Content-Type: text/rfc822-headers

${original(input).split('\n\n')[0]}

--5A1B01C0789.1773057603/mail.sender.example--
`,
    input,
  );
}

/** Postfix's success template (a DSN asked with NOTIFY=SUCCESS): Action delivered, 2.0.0. */
export function postfixDelivered(input: BounceInput): string {
  const domain = input.rcpt.split('@')[1] ?? 'example.net';
  return finish(
    `Date: Mon,  9 Mar 2026 08:00:02 +0000 (UTC)
From: MAILER-DAEMON@mail.sender.example (Mail Delivery System)
Subject: Successful Mail Delivery Report
To: ${SENDER}
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status;
	boundary="6B2C11C0BBB.1773043202/mail.sender.example"
Message-Id: <20260309080002.6B2C11C0BBB@mail.sender.example>

This is a MIME-encapsulated message.

--6B2C11C0BBB.1773043202/mail.sender.example
Content-Description: Notification
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mail.sender.example.

Your message was successfully delivered to the destination(s)
listed below. If the message was delivered to mailbox you will
receive no further notifications. Otherwise you may still receive
notifications of mail delivery errors from other systems.

                   The mail system

<${input.rcpt}>: delivery via mx1.${domain}[192.0.2.25]:25: 250 2.0.0 Ok:
    queued as 3F1E2A00C1

--6B2C11C0BBB.1773043202/mail.sender.example
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mail.sender.example
X-Postfix-Queue-ID: 6B2C11C0BBB
X-Postfix-Sender: rfc822; ${SENDER}
Arrival-Date: ${input.date ?? DEFAULT_DATE}

Final-Recipient: rfc822; ${input.rcpt}
Original-Recipient: rfc822;${input.rcpt}
Action: relayed
Status: 2.0.0
Remote-MTA: dns; mx1.${domain}
Diagnostic-Code: smtp; 250 2.0.0 Ok: queued as 3F1E2A00C1

--6B2C11C0BBB.1773043202/mail.sender.example
Content-Description: Message Headers
Content-Type: text/rfc822-headers

${original(input).split('\n\n')[0]}

--6B2C11C0BBB.1773043202/mail.sender.example--
`,
    input,
  );
}

/** Exim's DSN ("Mail delivery failed: returning message to sender"): Status 5.0.0, the 5.1.1 in the diagnostic. */
export function eximHardBounce(input: BounceInput): string {
  const domain = input.rcpt.split('@')[1] ?? 'example.net';
  return finish(
    `Return-path: <>
Envelope-to: ${SENDER}
Delivery-date: Mon, 09 Mar 2026 08:00:04 +0000
Received: from Debian-exim by mail.sender.example with local (Exim 4.96)
	id 1wXyZa-000AbC-2D
	for ${SENDER}; Mon, 09 Mar 2026 08:00:04 +0000
X-Failed-Recipients: ${input.rcpt}
Auto-Submitted: auto-replied
From: Mail Delivery System <Mailer-Daemon@mail.sender.example>
To: ${SENDER}
Content-Type: multipart/report; report-type=delivery-status; boundary=1773043204-eximdsn-1804289383
MIME-Version: 1.0
Subject: Mail delivery failed: returning message to sender
Message-Id: <E1wXyZa-000AbC-2D@mail.sender.example>
Date: Mon, 09 Mar 2026 08:00:04 +0000

--1773043204-eximdsn-1804289383
Content-type: text/plain; charset=us-ascii

This message was created automatically by mail delivery software.

A message that you sent could not be delivered to one or more of its
recipients. This is a permanent error. The following address(es) failed:

  ${input.rcpt}
    host mx1.${domain} [192.0.2.25]
    SMTP error from remote mail server after RCPT TO:<${input.rcpt}>:
    550 5.1.1 <${input.rcpt}>: Recipient address rejected: User unknown

--1773043204-eximdsn-1804289383
Content-type: message/delivery-status

Reporting-MTA: dns; mail.sender.example

Action: failed
Final-Recipient: rfc822;${input.rcpt}
Status: 5.0.0
Remote-MTA: dns; mx1.${domain}
Diagnostic-Code: smtp; 550 5.1.1 <${input.rcpt}>: Recipient address rejected: User unknown

--1773043204-eximdsn-1804289383
Content-type: message/rfc822

${original(input)}
--1773043204-eximdsn-1804289383--
`,
    input,
  );
}

/** Microsoft 365's NDR: multipart/report, Status 5.1.10 RESOLVER.ADR.RecipientNotFound, the original's headers only. */
export function microsoft365HardBounce(input: BounceInput): string {
  return finish(
    `Received: from AM0PR01MB1234.eurprd01.prod.exchangelabs.com (2603:10a6:208:ac::11)
 by AM0PR01MB5678.eurprd01.prod.exchangelabs.com with HTTPS; Mon, 9 Mar 2026
 08:00:05 +0000
MIME-Version: 1.0
From: <postmaster@sender.onmicrosoft.com>
To: <${SENDER}>
Date: Mon, 9 Mar 2026 08:00:05 +0000
Content-Type: multipart/report; report-type=delivery-status;
	boundary="e1b6ac34-85a7-4c19-9c7a-7a4d3f1b2a10"
X-MS-Exchange-Message-Is-Ndr:
Content-Language: en-US
Message-ID: <ec5d0e59-a3c2-4d18-b8f1-2b1f5f3e0c4a@AM0PR01MB1234.eurprd01.prod.exchangelabs.com>
In-Reply-To: <${input.messageId ?? 'offer-1@sender.example'}>
References: <${input.messageId ?? 'offer-1@sender.example'}>
Subject: Undeliverable: March offers
Auto-Submitted: auto-replied

--e1b6ac34-85a7-4c19-9c7a-7a4d3f1b2a10
Content-Type: multipart/alternative; differences=Content-Type;
	boundary="a7e2c9d1-6b3f-4e8a-9d2c-1f0e3b4a5c6d"

--a7e2c9d1-6b3f-4e8a-9d2c-1f0e3b4a5c6d
Content-Type: text/plain; charset="utf-8"
Content-Transfer-Encoding: base64

${Buffer.from(
  `Your message to ${input.rcpt} couldn't be delivered.\r\n${input.rcpt.split('@')[0]} wasn't found at ${input.rcpt.split('@')[1]}.\r\n\r\nAction Required\r\nUnknown To address\r\n\r\nHow to Fix It\r\nThe address may be misspelled or may not exist.\r\n`,
)
  .toString('base64')
  .replace(/.{76}/g, '$&\n')}
--a7e2c9d1-6b3f-4e8a-9d2c-1f0e3b4a5c6d
Content-Type: text/html; charset="utf-8"
Content-Transfer-Encoding: quoted-printable

<html><body><p>Your message to ${input.rcpt} couldn't be delivered.</p></body></html>

--a7e2c9d1-6b3f-4e8a-9d2c-1f0e3b4a5c6d--

--e1b6ac34-85a7-4c19-9c7a-7a4d3f1b2a10
Content-Type: message/delivery-status

Reporting-MTA: dns;AM0PR01MB1234.eurprd01.prod.exchangelabs.com
Received-From-MTA: dns;AM0PR01MB5678.eurprd01.prod.exchangelabs.com
Arrival-Date: ${input.date ?? 'Mon, 9 Mar 2026 07:59:58 +0000'}

Final-Recipient: rfc822;${input.rcpt}
Action: failed
Status: 5.1.10
Diagnostic-Code: smtp;550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup


--e1b6ac34-85a7-4c19-9c7a-7a4d3f1b2a10
Content-Type: text/rfc822-headers

${original(input).split('\n\n')[0]}

--e1b6ac34-85a7-4c19-9c7a-7a4d3f1b2a10--
`,
    input,
  );
}

/** An older Exchange's text-only NDR (quoted-printable, the original's headers inline): no delivery-status part. */
export function exchangeTextBounce(input: BounceInput): string {
  return finish(
    `Return-Path: <>
MIME-Version: 1.0
From: mailer-daemon@exchange.sender.example
To: ${SENDER}
Date: Mon, 9 Mar 2026 08:00:06 +0000
Content-Type: text/plain; charset="us-ascii"
Content-Transfer-Encoding: quoted-printable
Content-Language: en-US
Message-ID: <0000000000000000000000000000000000000000000000009@exchange.sender.example>
Subject: Undeliverable: March offers

Delivery has failed to these recipients or distribution lists:

${input.rcpt.split('@')[0]}<mailto:${input.rcpt}>
The recipient's e-mail address was not found in the recipient's e-mail syst=
em. Microsoft Exchange will not try to redeliver this message for you. Plea=
se check the e-mail address and try resending this message, or provide the =
following diagnostic text to your system administrator.

________________________________
Sent by Microsoft Exchange Server 2007






Diagnostic information for administrators:

Generating server: mta4.exchange.sender.example

${input.rcpt}
#550 5.1.1 RESOLVER.ADR.RecipNotFound; not found ##

Original message headers:

Received: from mail.sender.example (192.0.2.10) by mta4.exchange.sender.example
 (192.0.2.11) with Microsoft SMTP Server id 8.2.234.1; Mon, 9 Mar 2026
 07:59:58 +0000
Date: ${input.date ?? DEFAULT_DATE}
Subject: March offers
From: Sender News <${SENDER}>
To: <${input.rcpt}>
Message-ID: <${input.messageId ?? 'offer-1@sender.example'}>
MIME-Version: 1.0
Content-Type: text/plain;
`,
    input,
  );
}

/** Gmail's "Delivery Status Notification (Failure)": multipart/report around a multipart/related notice. */
export function gmailHardBounce(input: BounceInput): string {
  const id = input.messageId ?? 'CAOffer1=abc@mail.gmail.com';
  return finish(
    `Delivered-To: sender.news@gmail.com
Return-Path: <>
Received: by 2002:a05:6a10:8c0e:b0:5b1:4d3e:1a2b with SMTP id x14csp1234567pxb;
        Mon, 9 Mar 2026 00:00:07 -0800 (PST)
From: Mail Delivery Subsystem <mailer-daemon@googlemail.com>
To: sender.news@gmail.com
Auto-Submitted: auto-replied
Subject: Delivery Status Notification (Failure)
References: <${id}>
In-Reply-To: <${id}>
X-Failed-Recipients: ${input.rcpt}
Message-ID: <69a1b2c3.050a0220.1d2e3f.abcdGMR@mx.google.com>
Date: Mon, 09 Mar 2026 00:00:07 -0800 (PST)
Content-Type: multipart/report; boundary="000000000000d1e2f3a4b5c6d7e8"; report-type=delivery-status

--000000000000d1e2f3a4b5c6d7e8
Content-Type: multipart/related; boundary="000000000000d1e9f0a1b2c3d4e5"

--000000000000d1e9f0a1b2c3d4e5
Content-Type: multipart/alternative; boundary="000000000000d1eaf1a2b3c4d5e6"

--000000000000d1eaf1a2b3c4d5e6
Content-Type: text/plain; charset="UTF-8"


** Address not found **

Your message wasn't delivered to ${input.rcpt} because the address couldn't be found, or is unable to receive mail.

Learn more here: https://support.google.com/mail/?p=NoSuchUser

The response was:

550 5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address for typos or unnecessary spaces. For more information, go to https://support.google.com/mail/?p=NoSuchUser d75a77b69052e-4f1a2b3c4d5si123456cf.9 - gsmtp

--000000000000d1eaf1a2b3c4d5e6
Content-Type: text/html; charset="UTF-8"

<html><body><h2>Address not found</h2><p>Your message wasn't delivered to <a style=3D'color:#212121;text-decoration:none'><b>${input.rcpt}</b></a> because the address couldn't be found, or is unable to receive mail.</p></body></html>

--000000000000d1eaf1a2b3c4d5e6--
--000000000000d1e9f0a1b2c3d4e5
Content-Type: image/png; name="icon.png"
Content-Disposition: attachment; filename="icon.png"
Content-Transfer-Encoding: base64
Content-ID: <icon.png>

iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==
--000000000000d1e9f0a1b2c3d4e5--
--000000000000d1e2f3a4b5c6d7e8
Content-Type: message/delivery-status

Reporting-MTA: dns; googlemail.com
Received-From-MTA: dns; sender.news@gmail.com
Arrival-Date: ${input.date ?? 'Mon, 09 Mar 2026 00:00:05 -0800 (PST)'}
X-Original-Message-ID: <${id}>

Final-Recipient: rfc822; ${input.rcpt}
Action: failed
Status: 5.1.1
Remote-MTA: dns; mx1.${input.rcpt.split('@')[1] ?? 'example.net'}. (192.0.2.25, the server for the domain ${input.rcpt.split('@')[1] ?? 'example.net'}.)
Diagnostic-Code: smtp; 550 5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address for typos or unnecessary spaces. For more information, go to https://support.google.com/mail/?p=NoSuchUser d75a77b69052e-4f1a2b3c4d5si123456cf.9 - gsmtp
Last-Attempt-Date: Mon, 09 Mar 2026 00:00:07 -0800 (PST)

--000000000000d1e2f3a4b5c6d7e8
Content-Type: message/rfc822

DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=gmail.com; s=20230601; t=1773043205; x=1773648005; h=to:subject:message-id:date:from:mime-version:from:to:cc:subject:date:message-id:reply-to; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=abc
MIME-Version: 1.0
From: Sender News <sender.news@gmail.com>
Date: Mon, 9 Mar 2026 00:00:05 -0800
Message-ID: <${id}>
Subject: March offers
To: ${input.rcpt}
Content-Type: text/plain; charset="UTF-8"

Hello, here are this month's offers.

--000000000000d1e2f3a4b5c6d7e8--
`,
    input,
  );
}

/** Yahoo's "Failure Notice" (qmail's wording): no MIME structure, the original below a marker line. */
export function yahooTextBounce(input: BounceInput, said?: string): string {
  return finish(
    `Return-Path: <>
Received: from 10.197.33.11 by atlas-production.v2-mail-prod1-gq1.omega.yahoo.com pod-id atlas--production-gq1-6b4f9d8c7-x2vzq.gq1.yahoo.com with HTTP; Mon, 9 Mar 2026 08:00:08 +0000
Date: Mon, 9 Mar 2026 08:00:08 +0000
From: MAILER-DAEMON@yahoo.com
To: sender.news@yahoo.com
Subject: Failure Notice
X-Yahoo-Newman-Id: 123456.78901.bm@omp1234.mail.gq1.yahoo.com

Sorry, we were unable to deliver your message to the following address.

<${input.rcpt}>:
Remote host said: ${said ?? `554 delivery error: dd This user doesn't have a ${input.rcpt.split('@')[1] ?? 'yahoo.com'} account (${input.rcpt}) [0] - mta1234.mail.gq1.yahoo.com`} [RCPT_TO]

--- Below this line is a copy of the message.

Received: from [192.0.2.44] by mail.yahoo.com with HTTP; Mon, 9 Mar 2026 07:59:58 +0000
Date: ${input.date ?? DEFAULT_DATE}
From: Sender News <sender.news@yahoo.com>
To: ${input.rcpt}
Message-ID: <${input.messageId ?? '1234567.89.1773043198000@mail.yahoo.com'}>
Subject: March offers
MIME-Version: 1.0
Content-Type: text/plain; charset=UTF-8

Hello, here are this month's offers.
`,
    input,
  );
}

/** RFC 5965's example report (Appendix B.1) with an Original-Rcpt-To: Feedback-Type abuse. */
export function arfComplaint(input: BounceInput & { feedbackType?: string; withRcptTo?: boolean }): string {
  const rcptTo = input.withRcptTo === false ? '' : `Original-Rcpt-To: <${input.rcpt}>\n`;
  return finish(
    `From: <abusedesk@example.com>
Date: Thu, 8 Mar 2026 14:00:00 EDT
Subject: FW: March offers
To: <abuse@sender.example>
MIME-Version: 1.0
Message-ID: <arf-${input.messageId ?? 'offer-1@sender.example'}>
Content-Type: multipart/report; report-type=feedback-report;
     boundary="part1_13d.2e68ed54_boundary"

--part1_13d.2e68ed54_boundary
Content-Type: text/plain; charset="US-ASCII"
Content-Transfer-Encoding: 7bit

This is an email abuse report for an email message received from IP
192.0.2.10 on Thu, 8 Mar 2026 14:00:00 EDT.  For more information
about this format please see http://www.mipassoc.org/arf/.

--part1_13d.2e68ed54_boundary
Content-Type: message/feedback-report

Feedback-Type: ${input.feedbackType ?? 'abuse'}
User-Agent: SomeGenerator/1.0
Version: 1
Original-Mail-From: <bounces+123@sender.example>
${rcptTo}Arrival-Date: ${input.date ?? 'Thu, 8 Mar 2026 14:00:00 EDT'}
Reporting-MTA: dns; mail.example.com
Source-IP: 192.0.2.10
Authentication-Results: mail.example.com;
               spf=pass smtp.mailfrom=sender.example
Reported-Domain: sender.example
Reported-Uri: http://sender.example/unsubscribe

--part1_13d.2e68ed54_boundary
Content-Type: message/rfc822
Content-Disposition: inline

${original(input)}
--part1_13d.2e68ed54_boundary--
`,
    input,
  );
}

/** An ordinary message that talks about a bounce: no report, no mailer daemon. */
export function notABounce(input: BounceInput): string {
  return finish(
    `From: Jane Customer <jane@customer.example>
To: ${SENDER}
Subject: Re: March offers (your mail to ${input.rcpt} bounced?)
Date: Mon, 9 Mar 2026 09:00:00 +0000
Message-ID: <reply-77@customer.example>
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8

Hi, my colleague <${input.rcpt}>:
says your mail bounced with 550 5.1.1 user unknown. Could you check?

Jane
`,
    input,
  );
}
