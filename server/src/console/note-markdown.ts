/**
 * A note's Markdown body as HTML for the console (CONTRACT "Notes": "the console renders it as escaped text or
 * sanitized Markdown, never raw HTML"). One job: `renderNoteBody(body)` -> an HTML fragment that is safe to print
 * raw inside the item page.
 *
 * markdown-it 15 (CommonMark, tables, strikethrough, bare URLs linked) with:
 * - `html: false`: raw HTML in a body (`<script>`, `<img onerror>`, `<a href>`) is text, escaped like any other text.
 * - links only to absolute `http:`, `https:` and `mailto:` URLs (`validateLink`, an allow-list on the normalised URL,
 *   stricter than markdown-it's own deny-list, which lets `data:image/...` and relative URLs through). A refused
 *   link's text stays as text: `[x](javascript:alert(1))` renders as the literal source.
 * - every link `rel="noopener noreferrer nofollow"`, opening in the same tab (no `target`: a console link should not
 *   open a window unannounced).
 * - no images: `![alt](https://tracker.example/p.gif)` renders as a link "Image: alt" to the URL, so a note never
 *   makes the console fetch a third party's URL (no tracking pixel, no mixed content).
 * - headings shift down three levels (`#` -> `<h4>`, capped at `<h6>`): on the item page a note sits under the
 *   "Notes" `<h2>` and its own `<h3>`, and a body's headings must not break the page's outline.
 * - tables without the `style` alignment attribute (the console's CSP refuses inline styles).
 * - a single line break is a `<br>` (`breaks: true`), as people type notes in a text area.
 *
 * Bounded output: a body is at most NOTE_BODY_MAX (65,536) characters. Markdown can expand (`a.co` becomes a whole
 * `<a>` element): a rendering longer than NOTE_HTML_MAX characters is replaced by the body as escaped text in a
 * `<pre>` (at most 6 characters per input character: `"` -> `&quot;`), so one note's HTML is at most 512 KiB.
 */
import MarkdownIt from "markdown-it";
import { NOTE_BODY_MAX } from "@stageline/shared";

/** Longest HTML (characters) a rendered note body may be before it falls back to escaped text: 8x the body limit. */
export const NOTE_HTML_MAX = 8 * NOTE_BODY_MAX;

/** The URL schemes a note's links may use (anything else, relative URLs included, stays text). */
const SAFE_LINK = /^(?:https?:\/\/|mailto:)/i;

/** `rel` of every link in a note: no `window.opener`, no Referer to the linked site, no endorsement for search engines. */
export const NOTE_LINK_REL = "noopener noreferrer nofollow";

const md = new MarkdownIt("default", { html: false, linkify: true, typographer: false, breaks: true });
md.linkify.set({ fuzzyLink: false, fuzzyIP: false });
md.validateLink = (url: string): boolean => SAFE_LINK.test(url.trim());

md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  tokens[idx]!.attrSet("rel", NOTE_LINK_REL);
  return self.renderToken(tokens, idx, options);
};

md.renderer.rules.image = (tokens, idx) => {
  const token = tokens[idx]!;
  const src = String(token.attrGet("src") ?? "");
  const alt = token.children ? md.renderer.renderInlineAsText(token.children, md.options, {}) : token.content;
  const label = `Image: ${alt.trim() || src}`;
  const escape = md.utils.escapeHtml;
  // validateLink already refused unsafe sources (the token is then not an image): `src` is http(s) or mailto.
  return `<a href="${escape(src)}" rel="${NOTE_LINK_REL}">${escape(label)}</a>`;
};

// Table cell alignment comes as a `style` attribute, which the console's CSP refuses: leave it out.
for (const rule of ["th_open", "td_open"] as const) {
  md.renderer.rules[rule] = (tokens, idx, options, _env, self) => {
    tokens[idx]!.attrs = (tokens[idx]!.attrs ?? []).filter(([name]) => name !== "style");
    return self.renderToken(tokens, idx, options);
  };
}

const shiftHeading = (tag: string): string => `h${Math.min(6, Number(tag.slice(1)) + 3)}`;
md.renderer.rules.heading_open = (tokens, idx) => `<${shiftHeading(tokens[idx]!.tag)}>`;
md.renderer.rules.heading_close = (tokens, idx) => `</${shiftHeading(tokens[idx]!.tag)}>\n`;

/**
 * Renders a note body (Markdown, at most NOTE_BODY_MAX characters as the contract allows) to an HTML fragment safe
 * to print unescaped: no raw HTML, no script URLs, no remote images. A body whose HTML would exceed NOTE_HTML_MAX
 * characters (or a longer body, which the API refuses anyway) is shown as escaped text in `<pre class="note-text">`.
 * @param body the note's `body` as stored (LF or CRLF line ends alike).
 * @returns HTML, at most NOTE_HTML_MAX characters for a body within the contract's limit.
 */
export function renderNoteBody(body: string): string {
  if (body.length <= NOTE_BODY_MAX) {
    const html = md.render(body);
    if (html.length <= NOTE_HTML_MAX) return html;
  }
  return `<pre class="note-text">${md.utils.escapeHtml(body.slice(0, NOTE_BODY_MAX))}</pre>\n`;
}
