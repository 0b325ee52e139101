/** Argument checks of the public methods: each failure is a TypeError naming the rule. */
import type { Props } from "../analytics";

/** Length in characters (code points), as the server counts them. */
export const chars = (s: string): number => Array.from(s).length;

/**
 * `s` with every lone surrogate replaced by U+FFFD: the server accepts only well-formed Unicode.
 * (With the `u` flag a surrogate pair is one code point, so the class matches lone halves only.)
 */
export const wf = (s: string): string => s.replace(/[\ud800-\udfff]/gu, "\ufffd");

/** Bytes of `value` as JSON (UTF-8), as the server counts a body. */
export const bytes = (value: unknown): number => new Blob([JSON.stringify(value)]).size;

/** `s` cut to at most `n` characters without splitting a surrogate pair. */
export const cut = (s: string, n: number): string => wf(s.length > n ? Array.from(s).slice(0, n).join("") : s);

const fail = (method: string, rule: string): never => {
  throw new TypeError(`analytics.${method}: ${rule}`);
};

const sized = (method: string, what: string, value: unknown, max: number): string => {
  if (typeof value != "string" || !value || chars(value) > max) fail(method, `${what} must be a string of 1 to ${max} characters`);
  return value as string;
};

export const checkName = (name: unknown): string => wf(sized("event", "name", name, 100));

/** A copy of `props` when it follows the rules. */
export const checkProps = (props: unknown): Props => {
  if (props === undefined) return {};
  if ({}.toString.call(props) != "[object Object]") fail("event", "props must be a plain object (not an array or null)");
  const copy: Props = {};
  const keys = Object.keys(props as object);
  if (keys.length > 30) fail("event", "props may have at most 30 keys");
  for (const key of keys) {
    const value = (props as Record<string, unknown>)[key];
    const type = typeof value;
    if (type == "string" ? chars(value as string) > 2000 : type == "number" ? !isFinite(value as number) : type != "boolean")
      fail("event", `props.${key} must be a string of at most 2000 characters, a finite number or a boolean`);
    copy[wf(key)] = type == "string" ? wf(value as string) : (value as number);
  }
  if (bytes(copy) > 49152) fail("event", "props may be at most 48 KiB as JSON");
  return copy;
};

const EMAIL = /[^\s@]+@[^\s@]+\.[^\s@]+/;
const PHONE = /^\+?[\d\s().\/-]+$/;

export const checkId = (id: unknown): string => {
  const value = sized("identify", "id", id, 200);
  if (EMAIL.test(value)) fail("identify", "id must not be an e-mail address");
  const digits = value.replace(/\D/g, "").length;
  if (PHONE.test(value) && digits > 6 && digits < 16) fail("identify", "id must not be a phone number");
  return wf(value);
};
