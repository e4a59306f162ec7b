/**
 * The browser tests' waits: 20 s, and an interval for `waitForFunction`, whose default is
 * requestAnimationFrame, which Chromium does not run in a page that is not the front tab
 * (a wait on such a page would hang until its time-out if the page had not settled at once).
 */
export const WAIT = { timeout: 20_000, polling: 50 };
