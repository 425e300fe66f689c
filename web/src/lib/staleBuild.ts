// After a redeploy, an open tab still refers to the old build's chunk names: loading a scenario it had not
// loaded yet (one chunk per library file) then fails with a browser-specific message. Recognising it lets the
// page offer a reload, which keeps the state because the URL is the share link (useShareUrl keeps it current).

/** The messages Chromium, Firefox and Safari give for a dynamic import whose file is gone. */
const CHUNK_FAILURES = [
  /Failed to fetch dynamically imported module/i,
  /error loading dynamically imported module/i,
  /Importing a module script failed/i,
  /Unable to preload CSS/i,
];

/** Whether an error message says a part of the page could not be fetched (a newer build replaced it). */
export function isChunkLoadError(message: string): boolean {
  return CHUNK_FAILURES.some((re) => re.test(message));
}

/** What the banner says about it. */
export const STALE_BUILD_HINT =
  'The site was updated since this tab opened, so part of it could not be loaded. Reload the page: the ' +
  'scenario, policies and view are kept in the address.';
