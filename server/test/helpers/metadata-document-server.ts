/**
 * A loopback https server for Client ID Metadata Documents in tests: a self-signed certificate made for the test
 * (openssl, EC P-256, valid one day, for `localhost` and 127.0.0.1), which the test server trusts through
 * `config.oauthMetadataCa` (a test-only setting), and a server answering the documents it is given by path.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";

/** A fresh self-signed certificate and its private key (PEM). */
export function selfSignedCert(): { cert: string; key: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "cimd-cert-"));
  try {
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
      "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem"),
    ], { stdio: "ignore" });
    return { cert: readFileSync(path.join(dir, "cert.pem"), "utf8"), key: readFileSync(path.join(dir, "key.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A running document server: `documents` maps a path to the JSON it answers (404 otherwise). */
export interface MetadataDocumentServer {
  /** `https://localhost:<port>`. */
  origin: string;
  documents: Map<string, () => unknown>;
  /** Paths requested so far, in order. */
  fetched: string[];
  close(): Promise<void>;
}

/** Starts a document server on 127.0.0.1 with `tls` (from selfSignedCert). */
export async function startMetadataDocumentServer(tls: { cert: string; key: string }): Promise<MetadataDocumentServer> {
  const documents = new Map<string, () => unknown>();
  const fetched: string[] = [];
  const server = https.createServer(tls, (req, res) => {
    fetched.push(req.url ?? "");
    const doc = documents.get(req.url ?? "");
    if (!doc) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(doc()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `https://localhost:${(server.address() as AddressInfo).port}`,
    documents,
    fetched,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
