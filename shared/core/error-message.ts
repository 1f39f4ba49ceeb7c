/** What went wrong, for a log line or a status: an Error's message, anything else as text. */
export const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);
