/**
 * The repository's Markdown has no dead relative link (issue 28): every link of README.md, docs/ and the packages'
 * READMEs to a file of the repository names a file that exists, and every `#anchor` into a Markdown file names a
 * heading of it (GitHub's slug rules). README.md stays a front door: at most 150 lines, the two commands first.
 * No server, no database: it reads files.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { anchorsOf, brokenLinks, githubSlug, linksOf, markdownFiles } from "./markdown-links";

const root = path.resolve(__dirname, "..", "..");

describe("the checker", () => {
  it("makes GitHub's anchors: code spans as text, punctuation and symbols dropped, repeats numbered", () => {
    expect(githubSlug("What `npm test` runs and what CI (.ci/run) adds")).toBe("what-npm-test-runs-and-what-ci-cirun-adds");
    const anchors = anchorsOf("# Stageline\n\n## Console & security: roles, 2FA\n\n## Notes\n\n## Notes\n\n### `GET /healthz`\n\n<a id=\"Kept\"></a>\n");
    expect([...anchors]).toEqual(["stageline", "console--security-roles-2fa", "notes", "notes-1", "get-healthz", "kept"]);
  });

  it("finds inline, reference, image, table and HTML links, and none in code", () => {
    const text = "[a](a.md#x) ![i](i.png)\n\n| t |\n|---|\n| [c](c.md) |\n\n- [r][ref]\n\n<a href=\"h.md\">h</a>\n\n`[no](code.md)`\n\n```\n[no](block.md)\n```\n\n[ref]: r.md\n";
    expect(linksOf(text).map((link) => link.href)).toEqual(["a.md#x", "i.png", "c.md", "r.md", "h.md"]);
  });

  it("reports a missing file, a missing anchor, a link outside the repository, and accepts the rest", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stageline-links-"));
    try {
      fs.mkdirSync(path.join(dir, "docs"));
      fs.writeFileSync(path.join(dir, "docs", "ops.md"), "# Operations\n\n## Admin CLI\n");
      fs.writeFileSync(
        path.join(dir, "README.md"),
        [
          "# Front",
          "[ok](docs/ops.md#admin-cli) [dir](docs/) [self](#front) [web](https://example.com/x.md#nope) [root](/docs/ops.md)",
          "[gone](docs/missing.md)",
          "[anchor](docs/ops.md#configuration)",
          "[out](../shared/CONTRACT.md)",
          "[self-anchor](#nowhere)",
        ].join("\n\n"),
      );
      expect(brokenLinks(dir, "README.md").map(({ line, href }) => `${line} ${href}`)).toEqual([
        "5 docs/missing.md",
        "7 docs/ops.md#configuration",
        "9 ../shared/CONTRACT.md",
        "11 #nowhere",
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the repository's Markdown", () => {
  const files = markdownFiles(root);

  it("covers README.md, docs/ and every package's README", () => {
    for (const file of ["README.md", "docs/architecture.md", "docs/testing.md", "connector/README.md", "n8n/README.md", "client/README.md", "mcp/README.md"]) {
      expect(files).toContain(file);
    }
  });

  it("has no relative link to a missing file or heading", () => {
    const broken = files.flatMap((file) => brokenLinks(root, file)).map(({ file, line, href, reason }) => `${file}:${line} ${href}: ${reason}`);
    expect(broken).toEqual([]);
  });
});

describe("README.md, the front door", () => {
  const lines = fs.readFileSync(path.join(root, "README.md"), "utf8").trimEnd().split("\n");

  it("is at most 150 lines and starts with the two commands, within its first 40 lines", () => {
    expect(lines.length).toBeLessThanOrEqual(150);
    const head = lines.slice(0, 40).join("\n");
    expect(head).toMatch(/^npm install && npm start\b/m);
    expect(head).toMatch(/^npm test\b/m);
  });
});
