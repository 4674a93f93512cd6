/**
 * Note bodies of the largest size the contract allows (NOTE_BODY_MAX, 65,536 characters) built from one repeated
 * unit each, chosen to make the console's Markdown renderer (server/src/console/note-markdown.ts) work hardest or
 * expand most: characters it escapes (`"`, `&`), unclosed link openers (`[`), unclosed emphasis (`**a`), bare URLs and
 * e-mail addresses it links, images it turns into links, and empty headings.
 *
 * Shared by the unit test (server/test/note-markdown.test.ts: output bounded by NOTE_HTML_MAX, inert HTML) and the
 * benchmark's `markdown` phase (bench/lib/markdown-phase.ts: worst time per render), so both use the same bodies.
 */
import { NOTE_BODY_MAX } from "@stageline/shared";

/** `unit` repeated and cut to exactly NOTE_BODY_MAX characters. */
export const fillNoteBody = (unit: string): string => unit.repeat(Math.ceil(NOTE_BODY_MAX / unit.length)).slice(0, NOTE_BODY_MAX);

/** [label, body] pairs, each body exactly NOTE_BODY_MAX characters. */
export const PATHOLOGICAL_NOTE_BODIES: readonly (readonly [label: string, body: string])[] = [
  ["quotes", fillNoteBody('"')],
  ["ampersands", fillNoteBody("&")],
  ["brackets", fillNoteBody("[")],
  ["emphasis", fillNoteBody("**a")],
  ["bare URLs", fillNoteBody("http://a.co ")],
  ["e-mail addresses", fillNoteBody("a@b.co ")],
  ["images", fillNoteBody("![](http://a.co)")],
  ["headings", fillNoteBody("#\n")],
];
