/**
 * What the recorder captures: private by default.
 *
 * - Every input, select and textarea value is masked (`maskAllInputs`), inside unmasked regions too:
 *   owners see that a visitor typed, never what.
 * - All text is masked (`maskTextSelector: "*"`), except inside an element with `data-sl-unmask`
 *   (and its descendants), which the site marks as safe to show.
 * - An element with `data-sl-block` (or rrweb's `rr-block` class) is left out: the replay shows an
 *   empty box of its size.
 * - Canvas, fonts, cross-origin iframes and inline images are not recorded; scripts and comments
 *   are dropped from the snapshot.
 */
import type { record } from "@rrweb/record";

type Options = NonNullable<Parameters<typeof record>[0]>;

export const UNMASK = "[data-sl-unmask]";
export const BLOCK = "[data-sl-block]";

const stars = (text: string): string => text.replace(/\S/g, "*");

export const privacy: Options = {
  maskAllInputs: true,
  maskTextSelector: "*",
  maskTextFn: (text: string, element: HTMLElement | null) => (element?.closest?.(UNMASK) ? text : stars(text)),
  maskInputFn: (text: string) => "*".repeat(text.length),
  blockSelector: BLOCK,
  recordCanvas: false,
  collectFonts: false,
  recordCrossOriginIframes: false,
  inlineImages: false,
  inlineStylesheet: true,
  slimDOMOptions: {
    script: true,
    comment: true,
    headFavicon: true,
    headWhitespace: true,
    headMetaSocial: true,
    headMetaRobots: true,
    headMetaHttpEquiv: true,
    headMetaAuthorship: true,
    headMetaVerification: true,
  },
  sampling: { mousemove: 50, scroll: 150, media: 800 },
};
