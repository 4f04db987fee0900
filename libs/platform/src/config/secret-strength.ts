/**
 * Production's bar for a secret setting: not a value shipped in `.env.example`, no placeholder
 * word, long and varied enough to have been generated (`openssl rand -base64 48`).
 */

/** Every secret value `.env.example` ships (a unit test keeps this list and the file in step). */
export const EXAMPLE_SECRET_VALUES: readonly string[] = [
  'replace-with-openssl-rand-base64-48',
  'replace-with-openssl-rand-hex-24',
  'replace-with-openssl-rand-hex-32',
];

/**
 * Words that mark a value typed by hand or copied from documentation, matched case-insensitively
 * anywhere in the value (`change-me-to-a-long-secret`). Words of three letters match only as a
 * whole part between separators, so that a generated base64 value is not refused for carrying
 * them by chance.
 */
export const PLACEHOLDER_WORDS: readonly string[] = [
  'change-me',
  'change_me',
  'changeme',
  'changeit',
  'replace',
  'secret',
  'password',
  'passwd',
  'example',
  'placeholder',
  'sample',
  'dummy',
  'default',
  'insecure',
  'test',
  'demo',
  'todo',
  'fixme',
  'letmein',
  'qwerty',
  '123456',
  'abcdef',
  'xxx',
  'yyy',
  'zzz',
  'foo',
  'bar',
];

export const MIN_SECRET_LENGTH = 32;
export const MIN_SECRET_DISTINCT_CHARACTERS = 10;

/** The shortest unit the whole value repeats (`abcabcabc` → 3), or the value's length. */
function repeatingUnit(value: string): number {
  for (let size = 1; size <= value.length / 2; size++) {
    if (value.length % size === 0 && value.slice(0, size).repeat(value.length / size) === value) return size;
  }
  return value.length;
}

function containsWord(lower: string, word: string): boolean {
  if (word.length > 3) return lower.includes(word);
  return lower.split(/[^a-z0-9]+/).includes(word);
}

/** Why `value` is not a production secret, or null when it is acceptable. */
export function weakSecretReason(value: string): string | null {
  const lower = value.toLowerCase();
  if (EXAMPLE_SECRET_VALUES.some((example) => example.toLowerCase() === lower)) return 'it is the example value of .env.example';
  const word = PLACEHOLDER_WORDS.find((candidate) => containsWord(lower, candidate));
  if (word !== undefined) return `it contains the placeholder "${word}"`;
  if (value.length < MIN_SECRET_LENGTH) return `it is shorter than ${MIN_SECRET_LENGTH} characters`;
  if (new Set(value).size < MIN_SECRET_DISTINCT_CHARACTERS) return `it has fewer than ${MIN_SECRET_DISTINCT_CHARACTERS} distinct characters`;
  if (repeatingUnit(value) < value.length) return 'it repeats a shorter pattern';
  return null;
}

/** The one-line refusal for a weak secret setting. */
export function weakSecretMessage(name: string, reason: string): string {
  return `${name} is refused when NODE_ENV=production: ${reason}; generate one with openssl rand -base64 48`;
}
