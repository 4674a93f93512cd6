#!/usr/bin/env node
// The stageline-mcp program (see README.md): the bundle built by scripts/bundle.mjs.
require("../dist-bundle/stageline-mcp.js").main();
