/**
 * The Company Settings console: a server-rendered web application at `/console`, the second HTTP edge beside the
 * API (`/v1/ext`). See README.md in this folder for how a page is added.
 *
 * Order of the middleware (each line below runs for every console request):
 * helmet + no-store → cookies, form bodies (urlencoded, 64 KiB; the note forms' NOTE_FORM_MAX_BYTES) → static assets → Origin check (POST) →
 * session (the signed-in user and company on the request) → CSRF token check (POST) and a fresh token for forms →
 * public pages (sign-in and its second step, invitation) → sign-in guard (a session pending its second factor is not
 * signed in) → the two-factor page → the two-factor setup guard (when the company requires it) → the sections → 404
 * → HTML error page.
 */
import express, { Router } from "express";
import cookieParser from "cookie-parser";
import type { AppContext } from "../context";
import { consoleCsrfSecret, prepareSignIn } from "../services/console-sessions";
import { eventActorOfUser, runAsEventActor } from "../services/event-actors";
import { consoleNotFound, renderConsoleError } from "./errors";
import { requestsRouter } from "./pages/requests";
import { auditRouter } from "./pages/audit";
import { eventsRouter } from "./pages/events";
import { inviteRouter } from "./pages/invite";
import { keysRouter } from "./pages/keys";
import { NOTE_FORM_MAX_BYTES, NOTE_FORM_PATH, notesRouter } from "./pages/notes";
import { IMPORT_PATH, blueprintUpload, pipelinesRouter } from "./pages/pipelines";
import { oauthAppsRouter } from "./pages/oauth-apps";
import { oauthInteractionRouter } from "./pages/oauth";
import { profileRouter } from "./pages/profile";
import { signInRouter } from "./pages/sign-in";
import { teamRouter } from "./pages/team";
import { secondStepRouter, twoFactorRouter } from "./pages/two-factor";
import { webhooksRouter } from "./pages/webhooks";
import { consoleHelmet, csrfKit, noStore, originCheck } from "./security";
import { loadSession, requireSignedIn, requireTwoFactorSetUp } from "./session";
import { signedIn } from "./request";
import { ASSETS_DIR } from "./views";

/** Builds the /console router. */
export function consoleRouter(ctx: AppContext): Router {
  const router = Router();
  prepareSignIn();
  let secret = "";
  const csrf = csrfKit(() => secret);

  router.use(consoleHelmet());
  router.use("/assets", express.static(ASSETS_DIR, { index: false, fallthrough: false, maxAge: "1h" }));
  router.use(noStore);
  router.use(cookieParser());
  const forms = express.urlencoded({ extended: false, limit: "64kb" });
  const noteForms = express.urlencoded({ extended: false, limit: NOTE_FORM_MAX_BYTES });
  router.use((req, res, next) => (req.method === "POST" && NOTE_FORM_PATH.test(req.path) ? noteForms : forms)(req, res, next));
  router.use(originCheck);
  router.use(loadSession(ctx.prisma));
  router.post(IMPORT_PATH, blueprintUpload); // the one multipart form: parsed before the CSRF check reads its _csrf
  router.use(async (req, res, next) => {
    secret ||= await consoleCsrfSecret(ctx.prisma);
    const kit = csrf.forRequest(req);
    kit.doubleCsrfProtection(req, res, (err?: unknown) => {
      if (err) return next(err);
      res.locals.csrfToken = kit.generateCsrfToken(req, res);
      next();
    });
  });

  router.use(signInRouter(ctx));
  router.use(secondStepRouter(ctx));
  router.use(inviteRouter(ctx));
  router.use(requireSignedIn);
  // From here on the request is the signed-in user's: the events it writes record them (services/event-actors.ts).
  router.use((req, _res, next) => runAsEventActor(eventActorOfUser(signedIn(req)), next));
  router.use(twoFactorRouter(ctx));
  router.use(requireTwoFactorSetUp);
  router.get("/", (_req, res) => res.redirect(303, "/console/keys"));
  router.use(oauthInteractionRouter(ctx));
  router.use(keysRouter(ctx));
  router.use(webhooksRouter(ctx));
  router.use(eventsRouter(ctx));
  router.use(pipelinesRouter(ctx));
  router.use(notesRouter(ctx));
  router.use(oauthAppsRouter(ctx));
  router.use(teamRouter(ctx));
  router.use(profileRouter(ctx));
  router.use(auditRouter(ctx));
  router.use(requestsRouter(ctx));
  router.use(consoleNotFound);
  router.use(
    renderConsoleError(ctx.logger, (req, res) => {
      // A page that failed before (or at) the CSRF check still gets a token for its sign-out form. A valid CSRF
      // cookie is kept (not overwritten), so forms open in other tabs stay valid; assets fail before cookies are read.
      if (!secret || res.locals.csrfToken || !req.cookies) return;
      res.locals.csrfToken = csrf.forRequest(req).generateCsrfToken(req, res, { overwrite: false });
    }),
  );
  return router;
}
