/**
 * Domains that a typo suggester must leave alone, for bench/typos-corpus.ts, picked by hand:
 * providers known to run mailboxes on them, and company domains, some of them made up but
 * real-looking (acme.co, northwind.co), on the short top-level domains.
 */

/** Mailbox providers of many countries (ISPs, national webmail). */
// prettier-ignore
export const COUNTRY_PROVIDERS: readonly string[] = [
  // Germany, Austria, Switzerland
  'web.de', 'gmx.de', 'gmx.net', 'gmx.at', 'gmx.ch', 't-online.de', 'freenet.de', 'arcor.de', 'posteo.de',
  'mailbox.org', 'online.de', 'vodafone.de', 'kabelmail.de', 'ewetel.net', 'aon.at', 'chello.at',
  'bluewin.ch', 'hispeed.ch', 'sunrise.ch', 'mail.de',
  // France, Belgium, Netherlands
  'orange.fr', 'wanadoo.fr', 'free.fr', 'laposte.net', 'sfr.fr', 'neuf.fr', 'bbox.fr', 'numericable.fr',
  'club-internet.fr', 'aliceadsl.fr', 'telenet.be', 'skynet.be', 'proximus.be', 'ziggo.nl', 'kpnmail.nl',
  'planet.nl', 'home.nl', 'xs4all.nl', 'hetnet.nl', 'casema.nl',
  // Italy, Spain, Portugal
  'libero.it', 'virgilio.it', 'alice.it', 'tin.it', 'tiscali.it', 'fastwebnet.it', 'aruba.it', 'email.it',
  'telefonica.net', 'movistar.es', 'ono.com', 'terra.es', 'sapo.pt', 'netcabo.pt', 'clix.pt', 'iol.pt',
  // Nordics, Baltics, central and eastern Europe
  'telia.com', 'online.no', 'bredband.net', 'comhem.se', 'luukku.com', 'kolumbus.fi', 'seznam.cz',
  'centrum.cz', 'atlas.cz', 'volny.cz', 'email.cz', 'azet.sk', 'zoznam.sk', 'wp.pl', 'o2.pl', 'interia.pl',
  'onet.pl', 'op.pl', 'gazeta.pl', 'tlen.pl', 'citromail.hu', 'freemail.hu', 'abv.bg', 'mail.bg', 'dir.bg',
  'otenet.gr', 'rdslink.ro', 'inbox.lv', 'inbox.lt', 'one.lt', 'mail.ee',
  // Russia, Ukraine, Turkey, Israel
  'mail.ru', 'yandex.ru', 'ya.ru', 'rambler.ru', 'list.ru', 'bk.ru', 'inbox.ru', 'ngs.ru', 'ukr.net', 'i.ua',
  'meta.ua', 'mynet.com', 'superonline.com', 'walla.co.il', 'netvision.net.il', '012.net.il',
  // UK and Ireland
  'btinternet.com', 'sky.com', 'virginmedia.com', 'ntlworld.com', 'blueyonder.co.uk', 'talktalk.net',
  'tiscali.co.uk', 'o2.co.uk', 'plus.net', 'zen.co.uk', 'eircom.net',
  // North America
  'comcast.net', 'verizon.net', 'att.net', 'sbcglobal.net', 'cox.net', 'charter.net', 'bellsouth.net',
  'earthlink.net', 'optonline.net', 'optimum.net', 'roadrunner.com', 'frontier.com', 'frontiernet.net',
  'windstream.net', 'centurylink.net', 'q.com', 'juno.com', 'netzero.net', 'mindspring.com', 'suddenlink.net',
  'mediacombb.net', 'wowway.com', 'rcn.com', 'ptd.net', 'aim.com', 'pacbell.net', 'swbell.net',
  'ameritech.net', 'prodigy.net', 'embarqmail.com', 'telus.net', 'shaw.ca', 'rogers.com', 'sympatico.ca',
  'bell.net', 'videotron.ca', 'cogeco.ca', 'eastlink.ca', 'sasktel.net', 'prodigy.net.mx',
  // Latin America
  'uol.com.br', 'bol.com.br', 'terra.com.br', 'ig.com.br', 'globo.com', 'globomail.com', 'r7.com',
  'zipmail.com.br', 'oi.com.br', 'speedy.com.ar', 'fibertel.com.ar', 'arnet.com.ar',
  // Asia and Oceania
  'qq.com', '163.com', '126.com', 'sina.com', 'sina.cn', 'sohu.com', 'yeah.net', '139.com', '189.cn',
  'aliyun.com', 'foxmail.com', 'naver.com', 'daum.net', 'hanmail.net', 'nate.com', 'docomo.ne.jp',
  'ezweb.ne.jp', 'softbank.ne.jp', 'nifty.com', 'biglobe.ne.jp', 'ocn.ne.jp', 'hinet.net', 'pchome.com.tw',
  'rediffmail.com', 'sify.com', 'vsnl.net', 'singnet.com.sg', 'streamyx.com', 'bigpond.com', 'bigpond.net.au',
  'optusnet.com.au', 'iinet.net.au', 'tpg.com.au', 'internode.on.net', 'westnet.com.au', 'ozemail.com.au',
  'xtra.co.nz', 'clear.net.nz', 'slingshot.co.nz', 'vodafone.co.nz',
  // Africa
  'telkomsa.net', 'mweb.co.za', 'vodamail.co.za', 'webmail.co.za',
];

/** The big providers' own country domains (a suggester must not swap one country for another). */
// prettier-ignore
export const PROVIDER_COUNTRY_DOMAINS: readonly string[] = [
  'yahoo.se', 'yahoo.de', 'yahoo.dk', 'yahoo.gr', 'yahoo.ie', 'yahoo.in', 'yahoo.ca', 'yahoo.co.in',
  'yahoo.co.id', 'yahoo.com.ar', 'yahoo.com.au', 'yahoo.com.mx', 'yahoo.com.sg', 'yahoo.com.ph',
  'yahoo.com.tw', 'yahoo.com.hk', 'yahoo.co.jp', 'yahoo.no', 'yahoo.ro', 'hotmail.nl', 'hotmail.be',
  'hotmail.dk', 'hotmail.gr', 'hotmail.se', 'hotmail.ca', 'hotmail.de', 'hotmail.it', 'hotmail.es',
  'hotmail.com.ar', 'hotmail.com.br', 'hotmail.co.jp', 'hotmail.cl', 'hotmail.ch', 'hotmail.at', 'outlook.es',
  'outlook.dk', 'outlook.be', 'outlook.ie', 'outlook.kr', 'outlook.at', 'outlook.cl', 'outlook.cz',
  'outlook.jp', 'outlook.com.br', 'outlook.com.ar', 'outlook.com.au', 'outlook.sa', 'live.be', 'live.ca',
  'live.cn', 'live.de', 'live.dk', 'live.ie', 'live.it', 'live.nl', 'live.jp', 'live.hk', 'live.com.au',
  'live.com.mx', 'live.co.uk', 'live.fr', 'aol.co.uk', 'aol.de', 'aol.fr', 'gmx.fr', 'gmx.com', 'gmx.at',
  'gmx.ch', 'gmx.us', 'msn.com', 'protonmail.ch', 'proton.me', 'pm.me', 'fastmail.fm', 'tuta.io',
  'yandex.com', 'yandex.by', 'yandex.kz', 'yandex.ua', 'mail.com', 'email.com', 'me.com', 'mac.com',
  'ymail.com', 'rocketmail.com', 'googlemail.com', 'windowslive.com',
];

/** Companies' mail domains on the short top-level domains a suggester may take for typos. */
// prettier-ignore
export const COMPANY_DOMAINS: readonly string[] = [
  // .co
  't.co', 'angel.co', 'acme.co', 'northwind.co', 'contoso.co', 'globex.co', 'initech.co', 'hooli.co',
  'brightwave.co', 'harbor.co', 'lattice.co', 'pilot.co', 'front.co', 'basecamp.co', 'mural.co', 'zapier.co',
  'linear.co', 'gusto.co', 'monzo.co', 'revolut.co', 'nomad.co', 'wise.co', 'ramp.co', 'glean.co', 'hex.co',
  'orbit.co', 'maven.co', 'sonar.co', 'quill.co', 'atlas.co', 'copper.co', 'ember.co', 'vela.co', 'tandem.co',
  // .io
  'github.io', 'socket.io', 'gitlab.io', 'sentry.io', 'segment.io', 'intercom.io', 'coda.io', 'heap.io',
  'supabase.io', 'stackblitz.io', 'codepen.io', 'ionic.io', 'fig.io', 'crates.io', 'customer.io', 'hotjar.io',
  'auth0.io', 'buffer.io', 'clerk.io', 'doppler.io', 'fly.io', 'gitpod.io', 'hasura.io', 'kinsta.io',
  'lokalise.io', 'nhost.io', 'postman.io', 'prisma.io', 'pusher.io', 'render.io', 'snyk.io', 'tines.io',
  'trello.io', 'vanta.io',
  // .app
  'linear.app', 'vercel.app', 'netlify.app', 'railway.app', 'replit.app', 'tauri.app', 'cash.app', 'hey.app',
  'superhuman.app', 'cron.app', 'rise.app', 'tana.app', 'height.app', 'pitch.app', 'loom.app', 'mailbrew.app',
  'shortwave.app', 'spark.app',
  // .dev
  'fly.dev', 'deno.dev', 'pages.dev', 'web.dev', 'nx.dev', 'expo.dev', 'zed.dev', 'warp.dev', 'vite.dev',
  'vitest.dev', 'svelte.dev', 'react.dev', 'go.dev', 'hashnode.dev', 'modal.dev', 'val.dev',
  // .ai
  'x.ai', 'mistral.ai', 'character.ai', 'perplexity.ai', 'jasper.ai', 'cohere.ai', 'runway.ai', 'scale.ai',
  'writer.ai', 'poolside.ai', 'together.ai', 'harvey.ai', 'glean.ai', 'adept.ai', 'inflection.ai', 'you.ai',
  // .com and others, names near a provider's
  'stripe.com', 'figma.com', 'notion.so', 'loops.so', 'remix.run', 'bun.sh', 'astro.build', 'zoom.us',
  'dev.to', 'ghost.org', 'mailchimp.com', 'mailgun.com', 'postmarkapp.com', 'resend.com',
];

/** Real domains one or two slips from a big provider's (a suggester must tell them apart). */
// prettier-ignore
export const REAL_LOOKALIKES: readonly string[] = [
  'foxmail.com', 'hotmart.com', 'earthling.net', 'cloud.com', 'life.com', 'love.com', 'like.com', 'lime.com',
  'five.com', 'line.me', 'gmx.li', 'email.de', 'mail.be', 'mail.gr', 'mail.pt', 'verizon.com', 'comcast.com',
  'att.com', 'outlook.live.com', 'aol.de', 'msc.com', 'mac.com', 'me.com', 'email.com', 'mail.com',
  'ymail.com',
];
