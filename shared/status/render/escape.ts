/** Text and attribute escaping for the HTML, SVG and Atom renderers (all XML-safe). */
export function escapeXml(value: string): string {
  return (
    value
      // Characters XML 1.0 cannot carry at all (operator text is free-form).
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, "")
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&#39;")
  );
}
