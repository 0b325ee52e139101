/**
 * `analytics-tagged.js`: events without JavaScript. A click on an element with
 * `data-analytics-event="name"` (or on anything inside it) sends that event; on a form, the event is
 * sent when the form is submitted instead. `data-analytics-prop-KEY="value"` attributes of the same
 * element become its props (KEY as written, lowercased by HTML). Name and props follow the rules of
 * `analytics.event()`; a tag that breaks one is reported on the console and sends nothing.
 */
import { D, listen } from "../capture/common";
import type { Core } from "../plugin";
import { checkName, checkProps } from "../validate";

const PREFIX = "data-analytics-prop-";

(window.analytics as Core)._register("tagged", (host) => {
  listen(D, ["click", "submit"], (e: Event) => {
    const submit = e.type == "submit";
    for (const node of e.composedPath()) {
      if (!(node instanceof Element) || !node.hasAttribute("data-analytics-event")) continue;
      // A tagged form counts its submits, not the clicks inside it.
      if ((node instanceof HTMLFormElement) != submit) {
        if (submit) continue;
        return;
      }
      const props: Record<string, string> = {};
      for (const a of Array.from(node.attributes)) if (a.name.startsWith(PREFIX)) props[a.name.slice(PREFIX.length)] = a.value;
      try {
        host.event_(checkName(node.getAttribute("data-analytics-event")), checkProps(props));
      } catch (error) {
        console.warn(`Sightline: ${(error as Error).message} (data-analytics-event on`, node, ")");
      }
      return;
    }
  });
  return {};
});
