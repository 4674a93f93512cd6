/**
 * Server-side rendering with Eta (https://eta.js.org) 4.6: templates in `views/*.eta`, auto-escaping ON (`<%= %>`
 * escapes; `<%~ %>` prints raw and is only used for the layout's `body`, itself rendered by Eta). Every page is a
 * view rendered inside `views/layout.eta` (header, nav, main landmarks, skip link, title, flash notice).
 *
 * The views directory is found from this file in `src/console` and in `dist/console` alike (`../../src/console/views`).
 */
import path from "node:path";
import type { Request, Response } from "express";
import { Eta } from "eta";
import { consoleDate } from "./dates";
import { navFor } from "./nav";
import type { FieldError } from "./forms";

/** Directory of the console's templates. */
export const VIEWS_DIR = path.resolve(__dirname, "../../src/console/views");
/** Directory of the console's static files (stylesheet, copy-button script), served at /console/assets. */
export const ASSETS_DIR = path.resolve(__dirname, "../../src/console/assets");

const eta = new Eta({ views: VIEWS_DIR, autoEscape: true, cache: process.env.NODE_ENV !== "development", useWith: false });

/** The page-level data every view and the layout receive as `it`. */
export interface PageData {
  /** The `<title>` and `<h1>` text. */
  title: string;
  /** Field errors of a re-rendered form: shown in the error summary and beside each field. */
  errors?: FieldError[];
  [key: string]: unknown;
}

/** A one-time notice shown at the top of the next page (post/redirect/get). */
export interface Notice {
  kind: "success" | "error";
  message: string;
  /** A secret shown once (a new API key, an invitation link), with a copy button. */
  secret?: { label: string; value: string };
}

/**
 * Renders `view` (a path under views/ without `.eta`, e.g. `keys/list`) inside the layout with HTTP `status`.
 * The layout gets the signed-in user, the navigation for their role, the CSRF token for forms and the notice.
 */
export function renderPage(req: Request, res: Response, view: string, data: PageData, status = 200): void {
  const session = req.consoleSession;
  const it = {
    ...data,
    errors: data.errors ?? [],
    user: session?.user ?? null,
    nav: session ? navFor(session.user.role, req.baseUrl + req.path) : [],
    csrfToken: res.locals.csrfToken as string | undefined,
    notice: (res.locals.notice as Notice | undefined) ?? null,
    base: req.baseUrl,
    date: consoleDate,
  };
  const body = eta.render(`./${view}`, it);
  const html = eta.render("./layout", { ...it, body });
  res.status(status).type("html").send(html);
}
