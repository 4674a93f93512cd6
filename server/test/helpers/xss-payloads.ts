/**
 * Stored-XSS payloads for text that people write and the console shows (note bodies first), and a check that a
 * rendered HTML fragment is inert: only harmless elements and attributes, links only to http(s) and mailto.
 *
 * `HTML_XSS_PAYLOADS` are the classic ones (OWASP's XSS filter evasion cheat sheet, PortSwigger's XSS cheat sheet:
 * script, event handlers, SVG/MathML, breaking out of an attribute or a `<textarea>`, template syntax);
 * `MARKDOWN_XSS_PAYLOADS` are the Markdown ways in (links, images, autolinks, reference definitions, entities, fenced
 * code info strings, titles).
 */

/** HTML and template payloads, each as a body would carry it. */
export const HTML_XSS_PAYLOADS: readonly string[] = [
  "<script>alert(1)</script>",
  '"><script>alert(1)</script>',
  "'><img src=x onerror=alert(1)>",
  "<img src=x onerror=alert(1)>",
  "<svg onload=alert(1)>",
  "<svg><script>alert(1)</script></svg>",
  '<iframe src="javascript:alert(1)"></iframe>',
  '<a href="javascript:alert(1)">click</a>',
  "<body onload=alert(1)>",
  "<details open ontoggle=alert(1)>",
  "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
  "</textarea><script>alert(1)</script>",
  "</pre><script>alert(1)</script>",
  '<!--<img src="--><img src=x onerror=alert(1)//">',
  '<meta http-equiv="refresh" content="0;url=https://evil.example/">',
  '<base href="https://evil.example/">',
  '<form action="https://evil.example/"><button>Sign in again</button></form>',
  "<style>@import 'https://evil.example/x.css';</style>",
  '<link rel="stylesheet" href="https://evil.example/x.css">',
  '<object data="javascript:alert(1)"></object>',
  "<%~ it.csrfToken %><%= process.exit() %>",
  "{{constructor.constructor('alert(1)')()}}",
  "javascript:alert(1)",
];

/** Markdown-specific payloads: the ways a Markdown renderer could be made to emit a script URL or a remote fetch. */
export const MARKDOWN_XSS_PAYLOADS: readonly string[] = [
  "[x](javascript:alert(1))",
  "[x](JaVaScRiPt:alert(1))",
  "[x]( javascript:alert(1) )",
  "[x](<javascript:alert(1)>)",
  "[x](java\tscript:alert(1))",
  "[x](&#106;avascript:alert(1))",
  "[x](javascript&#58;alert(1))",
  "[x](vbscript:msgbox(1))",
  "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
  "[x](file:///etc/passwd)",
  "[x](//evil.example/)",
  "[x](/console/keys)",
  "<javascript:alert(1)>",
  "<data:text/html,<script>alert(1)</script>>",
  "[x][r]\n\n[r]: javascript:alert(1)",
  '[x][r]\n\n[r]: https://ok.example/ "a\\" onmouseover=\\"alert(1)"',
  '[x](https://ok.example/ "t\\" onmouseover=alert(1) x=\\"")',
  "![x](javascript:alert(1))",
  "![x](data:image/png;base64,iVBORw0KGgo=)",
  "![tracker](https://evil.example/pixel.gif)",
  "![<img src=x onerror=alert(1)>](https://evil.example/p.gif)",
  "[<img src=x onerror=alert(1)>](https://ok.example/)",
  '```"><script>alert(1)</script>\ncode\n```',
  "`<script>alert(1)</script>`",
  "&lt;script&gt;alert(1)&lt;/script&gt; &#60;img src=x onerror=alert(1)&#62;",
  "| a | b |\n|:-|-:|\n| <script>alert(1)</script> | [x](javascript:alert(1)) |",
  "> <img src=x onerror=alert(1)>\n> - [x](javascript:alert(1))",
];

/** Elements a rendered note may contain, and the attributes each may carry. */
const ALLOWED: Record<string, readonly string[]> = {
  p: [], br: [], hr: [], em: [], strong: [], s: [], code: ["class"], pre: ["class"], blockquote: [],
  ul: [], ol: ["start"], li: [], h4: [], h5: [], h6: [],
  table: [], thead: [], tbody: [], tr: [], th: [], td: [],
  a: ["href", "rel", "title"],
};

/**
 * The reasons `html` is not inert (empty when it is): every tag is one of a small allow-list with allowed attributes
 * only (no `on*`, no `style`, no `src`), every `href` is an absolute http(s) or mailto URL, every link has
 * `rel="noopener noreferrer nofollow"`, and nothing that loads a resource (`<img>`, `<iframe>`, `<link>`...) appears.
 */
export function inertnessProblems(html: string): string[] {
  const problems: string[] = [];
  for (const tag of html.matchAll(/<\/?([a-zA-Z][^\s/>]*)([^>]*)>/g)) {
    const name = tag[1]!.toLowerCase();
    const allowed = ALLOWED[name];
    if (!allowed) {
      problems.push(`element <${name}>`);
      continue;
    }
    if (tag[0].startsWith("</")) continue;
    const attrs = [...tag[2]!.matchAll(/\s([^\s="'>/]+)(?:="([^"]*)")?/g)];
    const rest = tag[2]!.replace(/\s([^\s="'>/]+)(?:="([^"]*)")?/g, "").trim();
    if (rest !== "") problems.push(`<${name}> has unparsed attribute text ${JSON.stringify(rest)}`);
    for (const [, attr, value = ""] of attrs) {
      if (!allowed.includes(attr!.toLowerCase())) problems.push(`<${name}> attribute ${attr}`);
      if (attr === "href" && !/^(https?:\/\/|mailto:)/i.test(value)) problems.push(`href ${JSON.stringify(value)}`);
    }
    if (name === "a" && !attrs.some(([, attr, value]) => attr === "rel" && value === "noopener noreferrer nofollow")) {
      problems.push(`<a> without rel="noopener noreferrer nofollow": ${tag[0]}`);
    }
  }
  return problems;
}
