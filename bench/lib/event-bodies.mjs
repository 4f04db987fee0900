// The bench's realistic web-client batches: 100 events of one device each (page views, web
// vitals, one error in ten with a fingerprint), as the browser SDK sends them, every event
// with a fresh random eventId. Shared by `npm run bench` (bench/run.mjs) and the statement
// replay (bench/pg-insert-replay.mjs), so both measure the same events.
import { randomBytes, randomUUID } from 'node:crypto';

export const EVENTS_PER_BATCH = 100;

// ---- realistic web-client batches -------------------------------------------------------

const MARK = '~~EVENT-ID~~';
const PAGES = ['/', '/pricing', '/docs/getting-started', '/blog/launch-week', '/account/billing', '/checkout'];
const NAMES = ['page.viewed', 'webvitals.lcp', 'webvitals.inp', 'webvitals.cls', 'webvitals.fcp', 'webvitals.ttfb', 'purchase_initiated'];
const ERRORS = ['error.unhandled', 'error.unhandledrejection', 'error.http', 'error.message'];
const FINGERPRINTS = Array.from({ length: 24 }, (_, i) => (0x1a2b3c00 + i * 7919).toString(16).padStart(8, '0').slice(-8));

/** One client's batch as JSON text split around each event's id marker (ids are filled in per request). */
function batchTemplate(client, startMs, pageUrls) {
  const anonymousId = `anon_${client.toString(36)}_${randomBytes(6).toString('hex')}`;
  const developerUserId = client % 3 === 0 ? `user_${client}` : undefined;
  const events = [];
  for (let i = 0; i < EVENTS_PER_BATCH; i++) {
    const page = PAGES[(client + i) % PAGES.length];
    const isError = i % 10 === 7;
    const name = i === 0 ? 'session.started' : isError ? ERRORS[i % ERRORS.length] : NAMES[(client * 7 + i) % NAMES.length];
    const properties = isError
      ? {
          fingerprint: FINGERPRINTS[(client + i) % FINGERPRINTS.length],
          message: `TypeError: Cannot read properties of undefined (reading 'price') at ${page}`,
          stack: `at renderPrice (app.js:1:${1000 + i})\nat updateCart (app.js:1:${2000 + i})`,
          url: `https://shop.example.com${page}`,
        }
      : name.startsWith('webvitals.')
        ? {
            value: Math.round(((client * 31 + i * 17) % 4000) * 10) / 10,
            rating: i % 3 === 0 ? 'good' : 'needs-improvement',
            navigationType: 'navigate',
            path: page,
          }
        : {
            ...(pageUrls && name === 'page.viewed' ? { url: `https://shop.example.com${page}` } : {}),
            path: page,
            title: `Example shop - ${page}`,
            referrer: 'https://www.google.com/',
            viewport: { w: 1440, h: 900 },
            durationMs: 1200 + i,
          };
    events.push({
      name,
      eventId: MARK,
      timestamp: startMs - (EVENTS_PER_BATCH - i) * 250,
      anonymousId,
      ...(developerUserId ? { developerUserId } : {}),
      ...(isError ? { level: 'error' } : {}),
      properties,
      tags: { release: '2026.11.3', locale: 'en-US', plan: client % 2 ? 'free' : 'pro' },
      categoryTags: isError ? ['frontend', 'checkout'] : ['web'],
      seq: i,
      context: {
        page: { url: `https://shop.example.com${page}` },
        userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
      },
    });
  }
  const body = { appId: 'app_bench', environment: 'sandbox', sdk: { name: '@service/web', version: '1.6.0' }, envelopeVersion: 2, events };
  return JSON.stringify(body).split(MARK);
}

/**
 * Bodies with a fresh random UUID per event, as the field clients send (`randomUUID()`): the
 * primary key of `events` takes inserts all over its key space, not appends. With `pageUrls`
 * the page views carry the web client's `properties.url`, whose host feeds the analytics
 * rollups (the read API's ingestion goal measures them).
 */
export function bodySource({ pageUrls = false } = {}) {
  const startMs = Date.now();
  const templates = Array.from({ length: 64 }, (_, client) => batchTemplate(client, startMs, pageUrls));
  const fill = (parts) => {
    let out = parts[0];
    for (let i = 1; i < parts.length; i++) out += randomUUID() + parts[i];
    return out;
  };
  let counter = 0;
  return {
    next: () => fill(templates[counter++ % templates.length]),
    sampleBytes: Buffer.byteLength(fill(templates[0])),
  };
}
