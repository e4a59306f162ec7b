/**
 * The `tag=value; tag=value` syntax shared by DMARC (RFC 7489 6.4), DKIM (RFC 6376 3.2),
 * MTA-STS (RFC 8461 3.1) and TLS-RPT (RFC 8460 3). Whitespace around tags and values is
 * allowed and a trailing `;` is allowed; a tag without `=` or a repeated tag is an error.
 */
export interface TagList {
  readonly tags: ReadonlyMap<string, string>;
  /** Tag names in the order they appeared (the version tag must come first). */
  readonly order: readonly string[];
  readonly errors: readonly string[];
}

export function parseTags(text: string, { lowerCaseNames = true } = {}): TagList {
  const tags = new Map<string, string>();
  const order: string[] = [];
  const errors: string[] = [];
  for (const raw of text.split(";")) {
    const part = raw.trim();
    if (part === "") continue;
    const eq = part.indexOf("=");
    if (eq <= 0) {
      errors.push(`"${part}" is not tag=value`);
      continue;
    }
    const name = part.slice(0, eq).trim();
    const key = lowerCaseNames ? name.toLowerCase() : name;
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) errors.push(`"${name}" is not a valid tag name`);
    if (tags.has(key)) errors.push(`tag ${name} appears twice`);
    else {
      tags.set(key, part.slice(eq + 1).trim());
      order.push(key);
    }
  }
  return { tags, order, errors };
}

/** TXT character-strings of one record are one string (RFC 7208 3.3, RFC 7489 6.4). */
export function joinTxt(strings: readonly string[]): string {
  return strings.join("");
}
