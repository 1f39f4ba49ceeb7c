// Waiting on a condition with a deadline: for state that announces no event (metrics, an
// in-flight call's progress), never a sleep standing in for synchronisation.

/** Polls `condition` until true or the deadline; for state that announces no event (metrics). */
export async function waitUntil(
  what: string,
  condition: () => Promise<boolean> | boolean,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
