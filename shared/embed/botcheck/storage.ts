/** Where the pass token lives between pages: sessionStorage (default), a cookie, or nowhere. */

export type StorageKind = "session" | "cookie" | "none";

export interface TokenStore {
  read(): string | null;
  write(token: string): void;
}

export function tokenStore(kind: StorageKind, key: string, cookieName: string): TokenStore {
  if (kind === "cookie") {
    const name = cookieName.replace(/[^A-Za-z0-9_-]/g, "") || "gateway_botcheck";
    return {
      read: () => {
        for (const part of document.cookie.split(";")) {
          const [k, ...rest] = part.trim().split("=");
          if (k === name) return decodeURIComponent(rest.join("=")) || null;
        }
        return null;
      },
      write: (token) => {
        const secure = location.protocol === "https:" ? "; secure" : "";
        // biome-ignore lint/suspicious/noDocumentCookie: the widget keeps its token where the site's server sees it; Cookie Store API is not in every browser
        document.cookie = `${name}=${encodeURIComponent(token)}; path=/; max-age=86400; samesite=lax${secure}`;
      },
    };
  }
  if (kind === "session") {
    const slot = `gateway_botcheck:${key}`;
    return {
      read: () => {
        try {
          return sessionStorage.getItem(slot);
        } catch (_) {
          return null;
        }
      },
      write: (token) => {
        try {
          sessionStorage.setItem(slot, token);
        } catch (_) {
          /* storage refused (private mode, quota): the visitor is challenged again next time */
        }
      },
    };
  }
  return { read: () => null, write: () => undefined };
}
