/**
 * cyrb53: a fast, well-spread 53-bit string hash, not cryptographic (callers that need no
 * cryptography use it because it is ~20x cheaper than sha256 per short string). Its output ends
 * up in labels stored in the API server (egress and netpol member indexes), so it must never
 * change: a test pins its values.
 *
 * Answers the two 32-bit halves; callers format as many bits as they need.
 */
export function cyrb53(text: string, seed = 0): { readonly high: number; readonly low: number } {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return { high: h2, low: h1 >>> 0 };
}
