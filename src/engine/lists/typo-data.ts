/**
 * The data behind `did_you_mean` (src/engine/lists/typo.ts), shared with the browser widget, so
 * it stays a TypeScript module (no JSON import, no `node:` import) and small: about 2 KB gzipped.
 *
 * Each entry of PROVIDERS is one mail provider's name and the suffixes under which that name is
 * a real mail domain, the main one first (`hotmail com co.uk fr ...`). A suffix that is not
 * listed is a typo when it is one slip from a listed one (hotmail.cm, hotmail.co.ik), so a
 * provider's real country domains must all be listed, or they would be "corrected" to a
 * neighbour (yahoo.se to yahoo.de). Entries are ordered by use: on a tie the earlier wins.
 */
export const PROVIDERS: readonly string[] = [
  'gmail com',
  'yahoo com co.uk fr de it es ca co.in com.br co.jp com.ar com.au com.mx com.sg com.ph com.my co.id com.hk com.tw com.vn co.nz co.th co.kr co.za in ie se dk no gr ro cn com.cn at be ch nl pl pt ru com.tr cl com.co com.pe com.ve',
  'hotmail com co.uk fr de it es nl be ca com.ar com.br co.jp se dk no fi gr ch at com.au co.nz co.in cl cz hu my ph sg co.th com.tr rs sk co.kr co.za com.vn co.il lt lv ru com.mx co.id com.hk com.tw ee pt ie lu',
  'outlook com fr de it es be at cl cz dk ie in jp kr lv my ph pt sa sg sk com.ar com.au com.br com.gr com.pe com.tr com.vn co.id co.il co.nz co.th co.uk hu',
  'icloud com',
  'aol com co.uk fr de it',
  'live com co.uk fr de it nl be ca dk ie jp cn hk se no fi at ch cl com.ar com.au com.mx com.sg co.kr co.za com.pt ru in',
  'msn com',
  'googlemail com',
  'me com',
  'mac com',
  'ymail com',
  'rocketmail com',
  'windowslive com',
  'protonmail com ch',
  'proton me',
  'pm me',
  'gmx com de net at ch fr es co.uk us li',
  'web de',
  'mail com ru de',
  'yandex ru com by kz ua com.tr',
  'zoho com',
  'fastmail com fm',
  'tutanota com de',
  'tuta io',
  'hey com',
  'comcast net',
  'verizon net',
  'att net',
  'sbcglobal net',
  'bellsouth net',
  'cox net',
  'charter net',
  'earthlink net',
  'optonline net',
  'btinternet com',
  'sky com',
  'virginmedia com',
  'ntlworld com',
  'orange fr',
  'wanadoo fr',
  'free fr',
  'laposte net',
  'sfr fr',
  't-online de',
  'freenet de',
  'libero it',
  'virgilio it',
  'seznam cz',
  'wp pl',
  'o2 pl',
  'interia pl',
  'onet pl',
  'rambler ru',
  'bk ru',
  'list ru',
  'inbox ru',
  'ukr net',
  'uol com.br',
  'bol com.br',
  'terra com.br',
  'qq com',
  '163 com',
  '126 com',
  'sina com',
  'naver com',
  'daum net',
  'hanmail net',
  'rediffmail com',
  'bigpond com',
  'optusnet com.au',
  'xtra co.nz',
  'telus net',
  'shaw ca',
  'rogers com',
  'sympatico ca',
];

/**
 * Real domains one slip from a provider above: never "corrected", never suggested. Each was
 * found by the corpus (test/kit/data/typos.json) or the packaged free-provider list.
 */
export const LOOKALIKES: readonly string[] = [
  'cloud.com',
  'earthling.net',
  'online.de',
  'aver.com',
  'email.com',
  'y7mail.com',
];

/**
 * Every top-level domain of two and of three letters, concatenated (from the ICANN part of the
 * Public Suffix List, 2026-11: its last labels, wildcard ones such as `*.ck` included). A typed
 * top-level domain that is not here exists nowhere, so it is a slip even on a short provider
 * name (web.dr, o2.pll) or an unknown domain (example.cpm).
 */
export const TLDS_OF_TWO =
  'acadaeafagaialamaoaqarasatauawaxazbabbbdbebfbgbhbibjbmbnbobrbsbtbvbwbybzcacccdcfcgchcickcl' +
  'cmcncocrcucvcwcxcyczdedjdkdmdodzeceeegereseteufifjfkfmfofrgagbgdgegfggghgiglgmgngpgqgrgsgt' +
  'gugwgyhkhmhnhrhthuidieiliminioiqirisitjejmjojpkekgkhkikmknkpkrkwkykzlalblclilklrlsltlulvly' +
  'mamcmdmemgmhmkmlmmmnmompmqmrmsmtmumvmwmxmymznancnenfngninlnonpnrnunzompapepfpgphpkplpmpnpr' +
  'psptpwpyqarerorsrurwsasbscsdsesgshsisjskslsmsnsosrssstsusvsxsysztctdtftgthtjtktltmtntotrtt' +
  'tvtwtzuaugukusuyuzvavcvevgvivnvuwfwsyeytzazmzw';

export const TLDS_OF_THREE =
  'aaaabbabcacoadsaegaflaiganzaolappartawsaxabarbbcbbtbcgbcnbetbidbiobizbmsbmwbomboobotboxbuy' +
  'bzhcabcalcamcarcatcbacbncbsceocfacfdcomcpacrsdaddayddsdevdhldiydnpdogdotdtvdvreatecoeduesq' +
  'eusfanfitflyfoofoxfrlftrfunfyigalgapgaygdngeaglegmogmxgoogopgotgovhbohivhkthothowibmiceicu' +
  'ifmincinginkintistitvjcbjiojlljmpjnjjotjoykfhkiakimkpnkrdlatlawldsllcllplollplltdmanmapmba' +
  'medmenmilmitmlbmlsmmamoemoimommovmsdmtnmtrnabnbanecnetnewnflngonhknownranrwnttnycobioneong' +
  'onloooorgottovhpaypetphdpidpinpncproprupubpwcredrenrilrioriprunrwesapsassbisbsscascbsewsex' +
  'sfrskiskysoyspasrlstctabtaxtcitdktelthdtjxtoptrvtuitvsubsunouolupsvetvigvinvipwinwmewowwtc' +
  'wtfxinxxxxyzyouyunzip';

/** The real top-level domains longer than three letters one slip from com, net or org. */
export const LONGER_TLDS_NEAR_GENERIC: readonly string[] = ['next'];
