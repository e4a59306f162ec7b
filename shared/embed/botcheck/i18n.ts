/** The widget's words in each language it speaks; `pick` falls back to English. */

export interface Strings {
  title: string;
  button: string;
  help: string;
  holding: string;
  verifying: string;
  passed: string;
  tooShort: string;
  expired: string;
  refused: string;
  unavailable: string;
  percent: string;
}

const STRINGS: Record<string, Strings> = {
  en: {
    title: "Confirm you are human",
    button: "Press and hold",
    help: "Press and hold the button until the circle is full. Space or Enter works too.",
    holding: "Keep holding…",
    verifying: "Checking…",
    passed: "Verified. Thank you!",
    tooShort: "Released too soon. Hold until the circle is full.",
    expired: "The check timed out. Press and hold again.",
    refused: "Access denied.",
    unavailable: "The check is unavailable right now. Please try again.",
    percent: "{n}%",
  },
  fr: {
    title: "Confirmez que vous êtes humain",
    button: "Restez appuyé",
    help: "Maintenez le bouton enfoncé jusqu’à ce que le cercle soit plein. Espace ou Entrée fonctionnent aussi.",
    holding: "Continuez d’appuyer…",
    verifying: "Vérification…",
    passed: "Vérifié. Merci !",
    tooShort: "Relâché trop tôt. Maintenez jusqu’à ce que le cercle soit plein.",
    expired: "La vérification a expiré. Restez appuyé à nouveau.",
    refused: "Accès refusé.",
    unavailable: "La vérification est indisponible pour le moment. Réessayez.",
    percent: "{n} %",
  },
  de: {
    title: "Bestätigen Sie, dass Sie ein Mensch sind",
    button: "Gedrückt halten",
    help: "Halten Sie die Schaltfläche gedrückt, bis der Kreis voll ist. Leertaste oder Eingabe gehen auch.",
    holding: "Weiter gedrückt halten…",
    verifying: "Wird geprüft…",
    passed: "Bestätigt. Danke!",
    tooShort: "Zu früh losgelassen. Halten Sie, bis der Kreis voll ist.",
    expired: "Die Prüfung ist abgelaufen. Bitte erneut gedrückt halten.",
    refused: "Zugriff verweigert.",
    unavailable: "Die Prüfung ist gerade nicht verfügbar. Bitte erneut versuchen.",
    percent: "{n} %",
  },
  es: {
    title: "Confirme que es humano",
    button: "Mantenga pulsado",
    help: "Mantenga pulsado el botón hasta que el círculo se complete. También funcionan Espacio o Intro.",
    holding: "Siga pulsando…",
    verifying: "Comprobando…",
    passed: "Verificado. ¡Gracias!",
    tooShort: "Soltó demasiado pronto. Mantenga hasta que el círculo se complete.",
    expired: "La comprobación caducó. Mantenga pulsado de nuevo.",
    refused: "Acceso denegado.",
    unavailable: "La comprobación no está disponible ahora. Inténtelo de nuevo.",
    percent: "{n} %",
  },
};

/** The first supported language among `wanted` (e.g. "fr-CA" → fr), else English. */
export function pick(wanted: (string | null | undefined)[]): { lang: string; strings: Strings } {
  for (const tag of wanted) {
    const lang = (tag || "").toLowerCase().split(/[-_]/)[0];
    if (STRINGS[lang]) return { lang, strings: STRINGS[lang] };
  }
  return { lang: "en", strings: STRINGS.en };
}
