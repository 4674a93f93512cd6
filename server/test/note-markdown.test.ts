/**
 * The console's note-body renderer (console/note-markdown.ts, CONTRACT "Notes": sanitized Markdown, never raw HTML):
 * stored-XSS payloads render inert, links are limited to http(s) and mailto with a safe `rel`, images never load, and
 * the output stays bounded for the largest body the contract allows (its render time is the benchmark's `markdown`
 * phase, not asserted here). No server: the renderer is a pure function.
 */
import { NOTE_BODY_MAX } from "@stageline/shared";
import { NOTE_HTML_MAX, renderNoteBody } from "../src/console/note-markdown";
import { PATHOLOGICAL_NOTE_BODIES, fillNoteBody } from "./helpers/pathological-note-bodies";
import { HTML_XSS_PAYLOADS, MARKDOWN_XSS_PAYLOADS, inertnessProblems } from "./helpers/xss-payloads";

const REL = 'rel="noopener noreferrer nofollow"';

describe("stored-XSS payloads render inert", () => {
  it.each([...HTML_XSS_PAYLOADS, ...MARKDOWN_XSS_PAYLOADS])("%j", (payload) => {
    const html = renderNoteBody(payload);
    expect(inertnessProblems(html)).toEqual([]);
  });

  it("the inertness check itself catches what it must", () => {
    expect(inertnessProblems('<p><img src="x" onerror="alert(1)"></p>')).toEqual(["element <img>"]);
    expect(inertnessProblems('<a href="javascript:alert(1)" rel="noopener noreferrer nofollow">x</a>')).toEqual(['href "javascript:alert(1)"']);
    expect(inertnessProblems('<p onclick="x">y</p>')).toEqual(["<p> attribute onclick"]);
    expect(inertnessProblems('<a href="https://a.example">x</a>')).toHaveLength(1);
  });
});

describe("raw HTML is text", () => {
  it("escapes <script> and <img onerror> as text, visible to the reader", () => {
    expect(renderNoteBody("<script>alert(1)</script>")).toBe("<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n");
    expect(renderNoteBody("<img src=x onerror=alert(1)>")).toBe("<p>&lt;img src=x onerror=alert(1)&gt;</p>\n");
  });

  it("decodes HTML entities to characters and escapes them again", () => {
    expect(renderNoteBody("&lt;b&gt; &#60;i&#62; &amp; &copy;")).toBe("<p>&lt;b&gt; &lt;i&gt; &amp; ©</p>\n");
  });

  it("breaks out of neither a <pre> nor a <textarea>", () => {
    expect(renderNoteBody("</textarea><script>x</script>")).toBe("<p>&lt;/textarea&gt;&lt;script&gt;x&lt;/script&gt;</p>\n");
    expect(renderNoteBody("```\n</pre><script>x</script>\n```")).toBe("<pre><code>&lt;/pre&gt;&lt;script&gt;x&lt;/script&gt;\n</code></pre>\n");
  });
});

describe("links", () => {
  it("keeps http, https and mailto links, each with rel=noopener noreferrer nofollow and no target", () => {
    expect(renderNoteBody("[Deal](https://crm.example/d/1?a=1&b=2)")).toBe(`<p><a href="https://crm.example/d/1?a=1&amp;b=2" ${REL}>Deal</a></p>\n`);
    expect(renderNoteBody("[site](http://crm.example/)")).toContain(`<a href="http://crm.example/" ${REL}>site</a>`);
    expect(renderNoteBody("[Ada](mailto:ada@example.com)")).toContain(`<a href="mailto:ada@example.com" ${REL}>Ada</a>`);
    expect(renderNoteBody("[x](https://a.example)")).not.toContain("target=");
  });

  it.each([
    ["javascript", "[x](javascript:alert(1))"],
    ["upper-case javascript", "[x](JAVASCRIPT:alert(1))"],
    ["entity-encoded javascript", "[x](&#106;avascript:alert(1))"],
    ["vbscript", "[x](vbscript:msgbox(1))"],
    ["data:text/html", "[x](data:text/html,<script>alert(1)</script>)"],
    ["file", "[x](file:///etc/passwd)"],
    ["relative", "[x](/console/keys)"],
    ["protocol-relative", "[x](//evil.example/)"],
  ])("leaves a %s link as its literal text", (_, body) => {
    const html = renderNoteBody(body);
    expect(html).not.toContain("<a");
    expect(html).toContain("[x](");
  });

  it("links autolinks of http(s) and e-mail addresses, not of javascript:", () => {
    expect(renderNoteBody("<https://crm.example/x>")).toBe(`<p><a href="https://crm.example/x" ${REL}>https://crm.example/x</a></p>\n`);
    expect(renderNoteBody("<ada@example.com>")).toContain(`<a href="mailto:ada@example.com" ${REL}>ada@example.com</a>`);
    expect(renderNoteBody("<javascript:alert(1)>")).toBe("<p>&lt;javascript:alert(1)&gt;</p>\n");
  });

  it("links bare URLs with a scheme, not bare domain names (a file name such as notes.md stays text)", () => {
    expect(renderNoteBody("see https://crm.example/a and notes.md")).toBe(`<p>see <a href="https://crm.example/a" ${REL}>https://crm.example/a</a> and notes.md</p>\n`);
  });

  it("resolves reference links to safe URLs only, with the title escaped", () => {
    expect(renderNoteBody('[Deal][d]\n\n[d]: https://crm.example/d "The \\"deal\\""')).toBe(
      `<p><a href="https://crm.example/d" title="The &quot;deal&quot;" ${REL}>Deal</a></p>\n`,
    );
    expect(renderNoteBody("[Deal][d]\n\n[d]: javascript:alert(1)")).not.toContain("<a");
  });
});

describe("images never load", () => {
  it("renders a remote image as a link named after its alt text", () => {
    expect(renderNoteBody("![Signed contract](https://files.example/c.png)")).toBe(`<p><a href="https://files.example/c.png" ${REL}>Image: Signed contract</a></p>\n`);
    expect(renderNoteBody("![](https://files.example/c.png)")).toContain(">Image: https://files.example/c.png</a>");
  });

  it("leaves data: and javascript: images as text", () => {
    expect(renderNoteBody("![x](data:image/png;base64,iVBORw0KGgo=)")).toBe("<p>![x](data:image/png;base64,iVBORw0KGgo=)</p>\n");
    expect(renderNoteBody("![x](javascript:alert(1))")).not.toContain("<a");
  });
});

describe("Markdown a note needs", () => {
  it("renders emphasis, lists, code, quotes and tables (without style attributes, which the CSP refuses)", () => {
    expect(renderNoteBody("**Call** _Ada_ about `v2`")).toBe("<p><strong>Call</strong> <em>Ada</em> about <code>v2</code></p>\n");
    expect(renderNoteBody("- one\n- two")).toBe("<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n");
    expect(renderNoteBody("> quoted")).toBe("<blockquote>\n<p>quoted</p>\n</blockquote>\n");
    const table = renderNoteBody("| a | b |\n|:-|-:|\n| 1 | 2 |");
    expect(table).toContain("<th>a</th>");
    expect(table).not.toContain("style");
  });

  it("shifts headings below the item page's own (# -> h4, capped at h6)", () => {
    expect(renderNoteBody("# One\n## Two\n#### Four")).toBe("<h4>One</h4>\n<h5>Two</h5>\n<h6>Four</h6>\n");
  });

  it("keeps single line breaks, whether typed with LF or CRLF", () => {
    expect(renderNoteBody("line 1\nline 2")).toBe("<p>line 1<br>\nline 2</p>\n");
    expect(renderNoteBody("line 1\r\nline 2\r\n\r\nnext")).toBe("<p>line 1<br>\nline 2</p>\n<p>next</p>\n");
  });
});

describe("bounded output", () => {
  // Render time is a speed target, measured by the benchmark's `markdown` phase (bench/lib/markdown-phase.ts) on the
  // same bodies, not asserted here.
  it.each(PATHOLOGICAL_NOTE_BODIES)("a %s body of 65,536 characters renders within NOTE_HTML_MAX, inert", (_, body) => {
    expect(body).toHaveLength(NOTE_BODY_MAX);
    const html = renderNoteBody(body);
    expect(html.length).toBeLessThanOrEqual(NOTE_HTML_MAX);
    expect(inertnessProblems(html)).toEqual([]);
  });

  it("falls back to escaped text in <pre> when the Markdown would expand past NOTE_HTML_MAX", () => {
    const html = renderNoteBody(fillNoteBody("a@b.co "));
    expect(html.startsWith('<pre class="note-text">a@b.co a@b.co')).toBe(true);
  });

  it("shows a body over the contract's limit (which the API refuses) as escaped, truncated text", () => {
    const html = renderNoteBody(`<script>${"x".repeat(NOTE_BODY_MAX)}`);
    expect(html.startsWith('<pre class="note-text">&lt;script&gt;xxx')).toBe(true);
    expect(html.length).toBeLessThanOrEqual(NOTE_HTML_MAX);
  });
});
