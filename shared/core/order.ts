/** Code-point string order: deterministic and locale-independent, unlike localeCompare. */
export const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
