import { describe, expect, it } from "vitest";
import { deviceClass, effectiveDeviceClass } from "../../../shared/botcheck/device.js";
import { UA } from "./fixtures.js";

describe("deviceClass", () => {
  it.each([
    ["iPad", UA.iPad, "tablet"],
    ["Android tablet (no Mobile token)", UA.androidTablet, "tablet"],
    ["iPhone", UA.iPhone, "mobile"],
    ["Android phone", UA.chromeAndroid, "mobile"],
    ["Chrome on Windows", UA.chromeWindows, "desktop"],
    ["Safari on macOS", UA.safariMac, "desktop"],
    ["Firefox on Windows", UA.firefoxWindows, "desktop"],
    ["curl", UA.curl, "desktop"],
    ["empty", "", "desktop"],
    [
      "smart TV",
      "Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36",
      "desktop",
    ],
  ])("%s → %s", (_name, ua, expected) => {
    expect(deviceClass(ua)).toBe(expected);
  });
});

describe("effectiveDeviceClass", () => {
  it("treats a Mac Safari with touch points as an iPad", () => {
    expect(effectiveDeviceClass(UA.safariMac, { touch_points: 5 })).toBe("tablet");
  });

  it.each([
    ["Mac Safari without touch", UA.safariMac, 0, "desktop"],
    ["Mac Safari, no signals", UA.safariMac, undefined, "desktop"],
    ["touch-screen Windows laptop", UA.chromeWindows, 10, "desktop"],
    ["iPhone", UA.iPhone, 5, "mobile"],
  ])("%s stays as the UA says", (_name, ua, touch, expected) => {
    expect(effectiveDeviceClass(ua, touch === undefined ? undefined : { touch_points: touch })).toBe(expected);
  });
});
