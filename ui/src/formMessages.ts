// What a form says when the API refuses one of its fields: a sentence saying what to type, in the
// owner's words, kept here for every form (by form, then by field). The API's own message, written
// for programs calling it ("The field 'name' is text of 1 to 100 characters."), is the fallback.
import { ApiError, messageOf } from "./api";

type Form = "goal" | "funnel" | "segment" | "journey" | "site" | "invitation" | "member" | "key" | "annotation" | "share";

const MESSAGES: Record<Form, Record<string, string>> = {
  goal: {
    name: "Give the goal a name (up to 100 characters, on one line).",
    kind: "Choose what the visitor does: visit a page or send a custom event.",
    match: "Choose how the path matches: exact path, path starts with, or glob.",
    path: "Give a page path starting with /, such as /pricing (no spaces, ? or #; for * choose Glob).",
    event: "Give the custom event's name as your site sends it, such as signup (up to 100 characters).",
    "prop.key": "Give the prop's name, such as plan, or leave it empty to count every such event.",
    "prop.value": "Give the value the prop must have, such as pro.",
    prop: "Give the prop's name and the value it must have, or leave both empty.",
    "revenue.prop": "Give the numeric prop holding each conversion's amount, such as amount.",
    "revenue.currency": "Give a three-letter currency code, such as EUR or USD.",
    revenue: "Give the numeric prop holding the amount and its currency, or leave both empty.",
  },
  funnel: {
    name: "Give the funnel a name (up to 100 characters, on one line).",
    steps: "Give 2 to 8 steps: a page path such as /pricing, or an event name.",
  },
  segment: {
    name: "Give the segment a name (up to 100 characters, on one line).",
    filters: "Add at least one filter before saving the segment.",
  },
  journey: {
    from: "Start from a page path such as /pricing, or an event name.",
  },
  site: {
    name: "Give the site a name (up to 100 characters, on one line).",
    timezone: "Choose a time zone from the list.",
    week_start: "Choose Monday, Sunday or Saturday.",
  },
  invitation: {
    email: "That is not an address an invitation can go to: type an e-mail address such as name@example.com.",
    role: "That role cannot be given: choose viewer or admin.",
    site_ids: "One of the chosen sites is no longer there: reload the page and choose from the sites listed, or give every site.",
  },
  member: {
    role: "That role cannot be given: choose viewer or admin.",
    site_ids: "One of the chosen sites is no longer there: reload the page and choose from the sites listed, or give every site.",
  },
  key: {
    name: "The name was refused: give the key a name of 1 to 100 characters that says where it is used, such as “Monthly report script”.",
    scopes: "Tick at least one thing the key may do.",
    site_id: "Choose one of the sites listed (reload the page if the site was just deleted): a key that sends events works on one site.",
  },
  annotation: {
    date: "That day cannot take a note: pick a day between 2000-01-01 and 2099-12-31.",
    text: "The note was refused: write what happened on one line of up to 500 characters, without line breaks, such as “Launched the new pricing page”.",
  },
  share: {
    password: "That password is too short: give the link a password of at least 8 characters, or leave it empty for a link anyone can open.",
  },
};

/** What the form `form` says about `failure`: for a refused field (422), what to type in it (a
 * field's own sentence, else its parent's: `steps.2.value` → `steps`); otherwise the API's message. */
export function formMessage(form: Form, failure: unknown): string {
  if (failure instanceof ApiError && failure.status === 422 && failure.field) {
    const known = MESSAGES[form];
    const parts = failure.field.split(".");
    for (let n = parts.length; n > 0; n -= 1) {
      const found = known[parts.slice(0, n).join(".")];
      if (found) return found;
    }
  }
  return messageOf(failure);
}
