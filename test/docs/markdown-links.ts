/**
 * Relative-link checking of the repository's Markdown (README.md, docs/, the packages' READMEs), as GitHub renders
 * them: a link to a file of this repository must name a file or folder that exists, inside the repository, and a
 * `#anchor` into a Markdown file must name one of its headings (or an HTML `id`/`name` anchor in it).
 *
 * Markdown is parsed with `marked` (its lexer resolves reference-style links, skips code blocks and code spans);
 * heading anchors follow GitHub's rules as `github-slugger` implements them (see `githubSlug`).
 */
import fs from "node:fs";
import path from "node:path";
import { marked, type Token, type Tokens } from "marked";

/** One link found in a Markdown file: its target as written and the line it is on (1-based). */
export interface MarkdownLink {
  href: string;
  line: number;
}

/** A link that does not resolve: the file it is in (repository-relative), its line, its target and why. */
export interface BrokenLink {
  file: string;
  line: number;
  href: string;
  reason: string;
}

/** Folders never searched for Markdown: dependencies, builds, local data. */
const SKIPPED_DIRECTORIES = new Set(["node_modules", "dist", "dist-bundle", "build", "data", "coverage", ".git", ".cache"]);

/**
 * Every Markdown file of the repository at `root` (repository-relative paths, `/`-separated, sorted), outside
 * dependencies, build output and local data (SKIPPED_DIRECTORIES) and dot-folders.
 */
export function markdownFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRECTORIES.has(entry.name) && !entry.name.startsWith(".")) walk(rel);
      } else if (entry.isFile() && entry.name.endsWith(".md")) found.push(rel);
    }
  };
  walk("");
  return found.sort();
}

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'" };
const decodeEntities = (text: string): string => text.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]);

/** The text GitHub shows for inline tokens: code spans without backticks, links as their text, HTML tags dropped. */
function plainText(tokens: readonly Token[]): string {
  return tokens
    .map((token) => {
      if (token.type === "html") return "";
      const children = (token as { tokens?: Token[] }).tokens;
      if (children?.length) return plainText(children);
      return decodeEntities((token as { text?: string }).text ?? "");
    })
    .join("");
}

/**
 * GitHub's anchor for a heading's text (the rules of the `github-slugger` package, which GitHub's renderer follows):
 * lower-cased; every character that is not a letter, a mark, a number, a connector (`_`), a hyphen or a space
 * removed (punctuation, symbols, emoji); each space then a hyphen. Repeats are made unique by the caller (`-1`, `-2`).
 */
export function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The lexer's tokens of `markdown` with the line each top-level token starts on (1-based). */
function tokensWithLines(markdown: string): Array<{ token: Token; line: number }> {
  const out: Array<{ token: Token; line: number }> = [];
  let line = 1;
  for (const token of marked.lexer(markdown)) {
    out.push({ token, line });
    line += (token.raw.match(/\n/g) ?? []).length;
  }
  return out;
}

/** HTML `href`/`src` targets and `id`/`name` anchors written as raw HTML in Markdown. */
const HTML_LINK = /\b(?:href|src)\s*=\s*["']([^"']+)["']/gi;
const HTML_ANCHOR = /\b(?:id|name)\s*=\s*["']([^"']+)["']/gi;

/**
 * The links of a Markdown text: inline, reference-style and image links, and `href`/`src` of raw HTML; not those in
 * code blocks or code spans. Each with the line of the block it is in.
 */
export function linksOf(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { token, line } of tokensWithLines(markdown)) {
    marked.walkTokens([token], (inner) => {
      if (inner.type === "link" || inner.type === "image") links.push({ href: (inner as Tokens.Link).href, line });
      else if (inner.type === "html") for (const [, href] of inner.raw.matchAll(HTML_LINK)) links.push({ href, line });
    });
  }
  return links;
}

/** The anchors a Markdown text defines: each heading's GitHub slug (repeats suffixed `-1`, `-2`, ...) and HTML ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { token } of tokensWithLines(markdown)) {
    marked.walkTokens([token], (inner) => {
      if (inner.type === "heading") {
        const slug = githubSlug(plainText((inner as Tokens.Heading).tokens));
        const count = seen.get(slug) ?? 0;
        seen.set(slug, count + 1);
        anchors.add(count ? `${slug}-${count}` : slug);
      } else if (inner.type === "html") {
        for (const [, id] of inner.raw.matchAll(HTML_ANCHOR)) anchors.add(id.toLowerCase());
      }
    });
  }
  return anchors;
}

/** True for a target with a URL scheme (`https:`, `mailto:`, ...) or protocol-relative: not a file of the repository. */
const isExternal = (href: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith("//");

/**
 * The broken relative links of the Markdown file `file` (repository-relative) under `root`: a target outside the
 * repository, a file or folder that does not exist, or a `#anchor` that a Markdown target (or the file itself) does
 * not define. A leading `/` is the repository's root, as on GitHub. External URLs are not checked.
 */
export function brokenLinks(root: string, file: string): BrokenLink[] {
  const anchorCache = new Map<string, Set<string>>();
  const anchorsIn = (target: string): Set<string> => {
    let anchors = anchorCache.get(target);
    if (!anchors) anchorCache.set(target, (anchors = anchorsOf(fs.readFileSync(path.join(root, target), "utf8"))));
    return anchors;
  };
  const broken: BrokenLink[] = [];
  for (const { href, line } of linksOf(fs.readFileSync(path.join(root, file), "utf8"))) {
    if (isExternal(href)) continue;
    const fail = (reason: string) => broken.push({ file, line, href, reason });
    const hashAt = href.indexOf("#");
    const pathPart = (hashAt < 0 ? href : href.slice(0, hashAt)).split("?")[0];
    const anchor = hashAt < 0 ? undefined : decodeURIComponent(href.slice(hashAt + 1));
    let decoded: string;
    try {
      decoded = decodeURIComponent(pathPart);
    } catch {
      fail("the path is not valid percent-encoding");
      continue;
    }
    const target = decoded === "" ? file : path.posix.normalize(decoded.startsWith("/") ? decoded.slice(1) : path.posix.join(path.posix.dirname(file), decoded));
    if (target === ".." || target.startsWith("../")) {
      fail("it leads outside the repository (a clone has nothing there)");
      continue;
    }
    if (!fs.existsSync(path.join(root, target))) {
      fail(`${target} does not exist`);
      continue;
    }
    if (anchor !== undefined && anchor !== "" && target.endsWith(".md") && !anchorsIn(target).has(anchor.toLowerCase())) {
      fail(`${target} has no heading or anchor "${anchor}"`);
    }
  }
  return broken;
}
