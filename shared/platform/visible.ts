/**
 * Text from outside (a member's or an organization's name, chosen by whoever made it) made
 * safe to show where it sits in a sentence of ours: an e-mail, a confirmation card. C0 and
 * C1 controls (line breaks and tabs too: a name is one line of ours, and must not add lines
 * to an e-mail) and the characters that reorder text (bidi embeddings, overrides, isolates and
 * marks, U+061C, zero-width characters, the BOM) are written as their code point, `⟨U+202E⟩`,
 * so a right-to-left override cannot reorder what follows ("… (organization 12)") nor hide
 * itself. The dashboard shows outside text the same way (dashboard/src/ui.tsx `visible`, which
 * keeps line breaks in multi-line text).
 *
 * Imports nothing: the sign-in page's bundle (shared/embed/signin/) uses it too.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's purpose
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;

export function visible(text: string): string {
  return text.replace(INVISIBLE, (c) => `⟨U+${c.codePointAt(0)?.toString(16).toUpperCase().padStart(4, "0")}⟩`);
}

/** An organization as a person is shown it where a name alone could be copied: `Acme (organization 12)`. */
export function orgLabel(name: string, id: number): string {
  return `${visible(name)} (organization ${id})`;
}
