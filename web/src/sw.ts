// The service worker: once the page has loaded, it works offline. Built as its own entry (dist/sw.js,
// next to index.html so its scope is the site's folder, whatever subpath that is); vite.config.ts
// prepends the list of built files (self.SCHEDLAB_PRECACHE), so a rebuild changes this file and the browser
// installs the new cache.
//
// Hashed assets are served from the cache first (their names change when their bytes do); the page itself is
// fetched from the network first, so a redeploy is picked up, and from the cache when the network is gone.

/** Paths relative to this file, set at build time. */
const PRECACHE: readonly string[] =
  (self as unknown as { SCHEDLAB_PRECACHE?: string[] }).SCHEDLAB_PRECACHE ?? [];

interface ExtendableEvent extends Event {
  waitUntil(p: Promise<unknown>): void;
}
interface FetchEvent extends ExtendableEvent {
  readonly request: Request;
  respondWith(r: Promise<Response> | Response): void;
}
interface Scope {
  readonly registration: { readonly scope: string };
  readonly clients: { claim(): Promise<void> };
  skipWaiting(): Promise<void>;
  addEventListener(type: 'install' | 'activate', fn: (e: ExtendableEvent) => void): void;
  addEventListener(type: 'fetch', fn: (e: FetchEvent) => void): void;
}
const sw = self as unknown as Scope;

function hash(s: string): string {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return (h >>> 0).toString(36);
}

const url = (path: string) => new URL(path, sw.registration.scope).href;
/** One cache per site folder (two copies on one host keep theirs) and build (the list has hashed names). */
const PREFIX = `schedlab-${sw.registration.scope}-`;
const CACHE = PREFIX + hash(PRECACHE.join('|'));

sw.addEventListener('install', (e) => {
  e.waitUntil(
    caches
      .open(CACHE)
      .then((c) => c.addAll(PRECACHE.map(url)))
      .then(() => sw.skipWaiting()),
  );
});

sw.addEventListener('activate', (e) => {
  e.waitUntil(
    caches
      .keys()
      .then((keys) =>
        Promise.all(keys.filter((k) => k.startsWith(PREFIX) && k !== CACHE).map((k) => caches.delete(k))),
      )
      .then(() => sw.clients.claim()),
  );
});

sw.addEventListener('fetch', (e) => {
  const req = e.request;
  if (req.method !== 'GET' || new URL(req.url).origin !== location.origin) return;
  if (req.mode === 'navigate') {
    // Any page of the site (share links differ only in their query) is index.html.
    e.respondWith(
      fetch(req).catch(async () => (await caches.match(url('./index.html'))) ?? Response.error()),
    );
    return;
  }
  e.respondWith(caches.match(req, { ignoreSearch: true }).then((hit) => hit ?? fetch(req)));
});
