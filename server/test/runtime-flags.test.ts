import fs from "node:fs";
import path from "node:path";
import { SERVER_NODE_FLAGS } from "../src/runtime-flags";

describe("server runtime flags", () => {
  it("npm start runs the server with exactly SERVER_NODE_FLAGS", () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../package.json"), "utf8"));
    expect(pkg.scripts.start).toBe(`node ${SERVER_NODE_FLAGS.join(" ")} server/dist/main.js`);
  });
});
